/**
 * The portal as its own process under a real `gurt serve`: killed, it leaves the core serving and
 * is started again (portal.addr answers again); stopped with the core, it goes with it; a core
 * killed with SIGKILL takes it along too (its stdin, held by the core, ends).
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  grant,
  makeHome,
  processAlive,
  type ServeProcess,
  startServe,
  startTask,
  stopAllTasks,
  taskRequest,
  until,
} from "../kit/mod.ts";

const PORTAL_AT = /gurt serve: portal at http:\/\/(127\.0\.0\.1:\d+) \(pid (\d+)\)/g;

/**
 * Runs `work` on a gurt serve, on a new home with an echo grant and a portal, once its first portal
 * has started; killed and its home removed afterwards.
 */
async function withPortal(work: (serve: ServeProcess, home: string) => Promise<void>) {
  const home = await makeHome({
    prefix: "gurt-portal-process-",
    files: {
      "grants/echo.toml": grant({ tool: "example.echo" }),
      "gurt.toml": '[portal]\nlisten = "127.0.0.1:0"\n',
    },
  });
  const serve = await startServe(home);
  try {
    assertEquals(serve.exited, null, serve.stderr());
    await until(() => portals(serve).length === 1, 30_000);
    await work(serve, home);
  } finally {
    await serve.kill9();
    await Deno.remove(home, { recursive: true });
  }
}

/** Every portal the core has said it started: its address and pid, in order. */
function portals(serve: ServeProcess): { addr: string; pid: number }[] {
  return [...serve.stderr().matchAll(PORTAL_AT)].map((m) => ({ addr: m[1], pid: Number(m[2]) }));
}

async function answers(addr: string): Promise<boolean> {
  try {
    const response = await fetch(`http://${addr}/login`);
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

async function portalAddr(home: string): Promise<string | null> {
  try {
    return (await Deno.readTextFile(`${home}/run/portal.addr`)).trim();
  } catch {
    return null;
  }
}

Deno.test({
  name: "killing the portal leaves the core serving, and the core starts it again",
  sanitizeResources: false,
  fn: async () => {
    await withPortal(async (serve, home) => {
      const [first] = portals(serve);
      assertEquals(await portalAddr(home), first.addr);
      assert(await answers(first.addr), "the portal does not answer");

      Deno.kill(first.pid, "SIGKILL");
      await until(() => !processAlive(first.pid), 10_000);
      // The core goes on answering its tasks while the portal is down.
      const task = await startTask(serve, { tools: ["example.echo"] });
      const call = { tool: "example.echo", input: { text: "still here" }, key: "k1" };
      const answer = await taskRequest(home, task, { method: "POST", path: "/call", body: call });
      assertEquals(answer.body, { ok: true, output: { text: "still here" } });

      await until(() => portals(serve).length === 2, 30_000);
      const [, second] = portals(serve);
      assert(second.pid !== first.pid, "the same pid");
      await until(async () => (await portalAddr(home)) === second.addr, 10_000);
      assert(await answers(second.addr), "the restarted portal does not answer");
      assertStringIncludes(serve.stderr(), "gurt serve: the portal stopped (killed by SIGKILL)");
      assertStringIncludes(serve.stderr(), "see runbook.md#portal-stopped");

      await stopAllTasks(serve);
      assertEquals((await serve.stop()).code, 0);
      assertEquals(await portalAddr(home), null, "portal.addr outlived gurt serve");
      await until(() => !processAlive(second.pid), 10_000);
    });
  },
});

Deno.test({
  name: "a gurt serve killed with SIGKILL takes its portal with it",
  sanitizeResources: false,
  fn: async () => {
    await withPortal(async (serve) => {
      const [portal] = portals(serve);
      await serve.kill9();
      await until(() => !processAlive(portal.pid), 10_000);
      assert(!(await answers(portal.addr)), "the portal still answers");
    });
  },
});
