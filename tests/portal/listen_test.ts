/**
 * A second box whose portal's port is taken (runbook.md#portal-listen-failed): with `[portal]
 * listen` not set the portal moves to a free port and says where; with it set, the core gives up
 * after a few tries with one line and goes on serving, instead of starting it again for ever.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { makeHome, type ServeProcess, startServe, until } from "../kit/mod.ts";
import { DEFAULT_PORTAL_LISTEN } from "../../mod/config/mod.ts";

const PORTAL_AT = /gurt serve: portal at http:\/\/(127\.0\.0\.1:(\d+)) \(pid \d+\)/;

/** Holds a loopback port as another program would; null if someone else holds it already. */
function hold(port: number): Deno.Listener | null {
  try {
    return Deno.listen({ hostname: "127.0.0.1", port });
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) return null;
    throw error;
  }
}

async function withServe(toml: string, work: (serve: ServeProcess) => Promise<void>) {
  const home = await makeHome({ prefix: "gurt-portal-listen-", files: { "gurt.toml": toml } });
  const serve = await startServe(home);
  try {
    assertEquals(serve.exited, null, serve.stderr());
    await work(serve);
  } finally {
    await serve.kill9();
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test({
  name:
    "with [portal] listen not set and its default taken, the portal listens on a free port and says where",
  sanitizeResources: false,
  fn: async () => {
    const port = Number(DEFAULT_PORTAL_LISTEN.split(":")[1]);
    // Taken by this test, or already by another program: taken either way.
    const held = hold(port);
    try {
      await withServe("", async (serve) => {
        await until(() => PORTAL_AT.test(serve.stderr()), 30_000);
        const [, addr, bound] = PORTAL_AT.exec(serve.stderr())!;
        assert(Number(bound) !== port, `the portal listens on ${bound}`);
        assertStringIncludes(
          serve.stderr(),
          `the portal cannot listen on ${DEFAULT_PORTAL_LISTEN} ([portal] listen is not set); ` +
            "it listens on a free port instead",
        );
        assertEquals((await Deno.readTextFile(`${serve.home}/run/portal.addr`)).trim(), addr);
        const login = await fetch(`http://${addr}/login`);
        await login.body?.cancel();
        assertEquals(login.status, 200);
      });
    } finally {
      held?.close();
    }
  },
});

Deno.test({
  name:
    "with [portal] listen set to a taken port, the core gives up after a few tries in one line and goes on serving",
  sanitizeResources: false,
  fn: async () => {
    const held = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (held.addr as Deno.NetAddr).port;
    try {
      await withServe(`[portal]\nlisten = "127.0.0.1:${port}"\n`, async (serve) => {
        const gaveUp = `gurt serve: the portal cannot listen on 127.0.0.1:${port} (tried 3 times)`;
        await until(() => serve.stderr().includes(gaveUp), 60_000);
        const text = serve.stderr();
        assertStringIncludes(text, "see runbook.md#portal-listen-failed");
        // Started again twice before giving up, and never after.
        assertEquals(text.split("it starts again in").length - 1, 2, text);
        assert(!text.slice(text.indexOf(gaveUp)).includes("starts again"), text);
        assert(!PORTAL_AT.test(text), text);
        // The core itself still answers.
        const tasks = await serve.admin("GET", "/tasks");
        assertEquals(tasks.status, 200);
      });
    } finally {
      held.close();
    }
  },
});
