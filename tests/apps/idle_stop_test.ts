/**
 * An app's server stopped when idle starts again at its next call, even a call that comes while
 * the stopped server's sandbox is still being ended: the new server waits for that end, which
 * kills whatever is in the app's cgroup, instead of being killed by it (the call then failed with
 * "it exited with signal SIGKILL" and the app paused).
 */
import { assertEquals } from "../assert.ts";
import { until } from "../kit/mod.ts";
import { everythingManifest, haveTestApps, startAppBox } from "./app_kit.ts";

Deno.test({
  name: "a call right after an app's idle stop starts its server again and is answered",
  ignore: !haveTestApps,
  fn: async () => {
    // Inside [apps] (app_kit's gurt.toml ends with that table).
    const box = await startAppBox("idle_ms = 300\n");
    try {
      const source = await box.source(
        "idler",
        everythingManifest(),
      );
      const added = await box.add(source, "idler");
      assertEquals(added.status, 200, JSON.stringify(added.body));
      await box.grant({ tool: "idler.echo" });
      const task = await box.task(["idler.echo"]);
      for (let round = 0; round < 4; round++) {
        // The moment the app says it stopped, its server's end is under way: call then.
        await until(async () => {
          const apps = (await box.admin("GET", "/apps")).body.apps as { state: string }[];
          return apps[0].state !== "running";
        }, { ms: 30_000, every: 2, what: "the idle stop" });
        const answer = await box.call(task, "idler.echo", { message: `round ${round}` });
        assertEquals(answer.body.ok, true, JSON.stringify(answer.body));
      }
    } finally {
      await box.close();
    }
  },
});
