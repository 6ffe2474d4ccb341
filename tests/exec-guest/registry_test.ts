/** The exec registry on its own: finished execs are kept up to MAX_RETAINED, oldest finish first. */
import { ExecRegistry, MAX_RETAINED } from "../../mod/exec-guest/exec_registry.ts";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { withHome } from "../kit/mod.ts";

Deno.test("past MAX_RETAINED finished execs, the earliest finished are forgotten first", async () => {
  await withHome(async (cwd) => {
    const registry = new ExecRegistry({ maxConcurrentExecs: 8, execRetentionMs: 3_600_000 });
    const spec = {
      argv: ["true"],
      cwd,
      env: { PATH: "/usr/bin:/bin" },
      stdin: null,
      timeoutMs: 10_000,
      killGraceMs: 100,
      maxOutputBytes: 1024,
      sessionHelper: null,
    };
    const ids: string[] = [];
    for (let i = 0; i < MAX_RETAINED + 3; i++) {
      const record = registry.start(spec);
      ids.push(record.id);
      await record.process.done;
      await Promise.resolve(); // the registry's own `done` handler has run
    }
    // Every start and every lookup sweeps: the three earliest are gone, the last MAX_RETAINED kept.
    for (const id of ids.slice(0, 3)) {
      assertThrows(() => registry.get(id), Error, "no exec has the id");
    }
    for (const id of ids.slice(3)) assertEquals(registry.get(id).outcome?.exit_code, 0);
    assert(registry.counters.finished === MAX_RETAINED + 3, "every exec was counted");
  }, { prefix: "gurt-registry-" });
});
