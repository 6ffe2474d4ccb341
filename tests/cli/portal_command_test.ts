/** `gurt serve` opens the portal on [portal] listen; `gurt portal` prints a link that signs in once. */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, startServe, until, withHome } from "../kit/mod.ts";

Deno.test("gurt serve writes the portal's address; gurt portal's link signs in once; stopping removes it", async () => {
  await withHome(async (home) => {
    const env = { BOX_VAULT: `${home}/vault.env`, NO_COLOR: "1" };
    const serve = await startServe(home, { env });
    try {
      await until(async () => {
        try {
          return (await Deno.readTextFile(`${home}/run/portal.addr`)).endsWith("\n");
        } catch {
          return false;
        }
      }, 30_000);
      assertEquals((await Deno.stat(`${home}/portal/owner.token`)).mode! & 0o777, 0o600);
      const printed = await gurt(["--home", home, "portal"], { env });
      assertEquals(printed.code, 0, printed.stderr);
      const link = new URL(printed.stdout.trim());
      assertEquals(link.hostname, "127.0.0.1");
      const code = link.searchParams.get("code")!;
      const origin = link.origin;
      const signIn = () =>
        fetch(`${origin}/login`, {
          method: "POST",
          headers: { origin },
          body: new URLSearchParams({ code }),
          redirect: "manual",
        });
      const first = await signIn();
      await first.body?.cancel();
      assertEquals(first.status, 303);
      const cookie = /gurt_session=[^;]+/.exec(first.headers.get("set-cookie") ?? "")![0];
      const page = await fetch(`${origin}/approvals`, { headers: { cookie } });
      assertStringIncludes(await page.text(), "Nothing is waiting for you");
      const second = await signIn();
      await second.body?.cancel();
      assertEquals(second.status, 401);
    } finally {
      await serve.stop();
    }
    assertStringIncludes(serve.stderr(), "gurt serve: portal at http://127.0.0.1:");
    let gone = false;
    await Deno.stat(`${home}/run/portal.addr`).catch(() => (gone = true));
    assertEquals(gone, true, "portal.addr outlived gurt serve");
    const after = await gurt(["--home", home, "portal"], { env });
    assertEquals(after.code, 1);
    assertStringIncludes(after.stderr, "see runbook.md#portal-listen-failed");
  }, { prefix: "gurt-portal-", files: { "gurt.toml": '[portal]\nlisten = "127.0.0.1:0"\n' } });
});
