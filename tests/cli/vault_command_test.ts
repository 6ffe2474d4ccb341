/** `gurt vault …` against a real core: the value comes from stdin, and nothing prints a value. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, gurtArgs, startBox } from "../kit/mod.ts";
import { vaultFolder } from "../vault/helpers.ts";

Deno.test("gurt vault set reads the value from stdin; list shows names, set times and denied apps", async () => {
  const folder = await vaultFolder("");
  const box = await startBox({ env: { BOX_VAULT: folder.path } });
  const run = (args: string[], stdin?: string) =>
    gurt(["--home", box.home, "vault", ...args], { env: { BOX_VAULT: folder.path }, stdin });
  try {
    const set = await run(["set", "SHOP_API_KEY"], "shop-value-from-stdin-1\n");
    assertEquals([set.code, set.stdout], [0, "set SHOP_API_KEY\n"]);
    assertEquals(box.core.deps.vault.value("SHOP_API_KEY"), "shop-value-from-stdin-1");
    assertEquals(
      (await run(["deny", "example", "SHOP_API_KEY"])).stdout,
      "SHOP_API_KEY is off for example\n",
    );
    const list = await run(["list"]);
    assertEquals(list.code, 0);
    assert(
      /^SHOP_API_KEY {2}set \d{4}-\d\d-\d\dT[\d:.]+Z {2}off for example\n$/.test(list.stdout),
      list.stdout,
    );
    assert(!list.stdout.includes("shop-value-from-stdin-1"));
    assertEquals((await run(["rm", "SHOP_API_KEY"])).stdout, "removed SHOP_API_KEY\n");
    assertEquals((await run(["list"])).stdout, "no vault keys set\n");
    const bad = await run(["set", "shop_key"], "x-value-12345\n");
    assertEquals(bad.code, 1);
    assertStringIncludes(bad.stderr, `"shop_key" is not a vault key name`);
    const empty = await run(["set", "EMPTY_KEY"], "");
    assertEquals(empty.code, 1);
    assertStringIncludes(empty.stderr, "no value was given for EMPTY_KEY; nothing was set");
  } finally {
    await box.close();
    await folder.remove();
  }
});

Deno.test("gurt vault set on a terminal prompts without echoing what is typed", {
  ignore: !(await Deno.stat("/usr/bin/script").then(() => true, () => false)),
}, async () => {
  const folder = await vaultFolder("");
  const box = await startBox({ env: { BOX_VAULT: folder.path } });
  const command = [
    Deno.execPath(),
    ...gurtArgs(["--home", box.home, "vault", "set", "TTY_API_KEY"]),
  ]
    .join(" ");
  // `script` gives the command a terminal; what it echoes comes back on stdout.
  const child = new Deno.Command("script", {
    args: ["-q", "-e", "-c", command, "/dev/null"],
    env: { NO_COLOR: "1", BOX_VAULT: folder.path },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  let seen = "";
  try {
    while (!seen.includes("(not shown): ")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    await writer.write(new TextEncoder().encode("typed-secret-value-9\r"));
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    await writer.close().catch(() => {});
    const status = await child.status;
    await new Response(child.stderr).text();
    assertEquals(status.code, 0, seen);
    assertStringIncludes(seen, "value of TTY_API_KEY (not shown): ");
    assertStringIncludes(seen, "set TTY_API_KEY");
    assert(!seen.includes("typed-secret-value-9"), `the value was echoed: ${seen}`);
    assertEquals(box.core.deps.vault.value("TTY_API_KEY"), "typed-secret-value-9");
  } finally {
    await box.close();
    await folder.remove();
  }
});
