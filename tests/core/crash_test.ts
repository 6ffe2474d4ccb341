/**
 * The crash test: `kill -9` of a real `gurt serve` at a random moment of load from several tasks,
 * twenty rounds. After each restart the audit log verifies, every acknowledged step and call is
 * still there, a call cut off runs again under its key without a second effect, and no answered
 * key's tool ran twice.
 */
import { assert, assertEquals } from "../assert.ts";
import { verifyHome } from "../../mod/audit/mod.ts";
import {
  auditRecords,
  grant,
  type Json,
  noteKeys,
  type ServeProcess,
  startServe,
  startTask,
  stopAllTasks,
  taskRequest,
} from "../kit/mod.ts";

const ROUNDS = 20;
const TASKS = 3;
const CALLERS_PER_TASK = 2;

interface Ledger {
  /** Keys sent whose answer never came back: cut off by the kill. */
  inDoubt: Map<string, { task: string; key: string }>;
  /** Answered keys and their answers. */
  acked: Map<string, { task: string; key: string; answer: Json; firstTry: boolean }>;
  /** Step texts acknowledged, by task. */
  steps: Map<string, Set<string>>;
}

async function caller(
  home: string,
  task: string,
  name: string,
  ledger: Ledger,
  stopped: { value: boolean },
): Promise<void> {
  for (let i = 0; !stopped.value; i++) {
    const key = `${name}-${i}`;
    const id = `${task}/${key}`;
    ledger.inDoubt.set(id, { task, key });
    try {
      const call = await taskRequest(home, task, {
        method: "POST",
        path: "/call",
        body: { tool: "example.note", input: { text: key }, key },
      });
      assertEquals(call.body.ok, true, JSON.stringify(call.body));
      ledger.inDoubt.delete(id);
      ledger.acked.set(id, { task, key, answer: call.body, firstTry: true });
      const step = await taskRequest(home, task, {
        method: "POST",
        path: "/step",
        body: { text: key },
      });
      assertEquals(step.status, 200);
      ledger.steps.get(task)!.add(key);
    } catch (error) {
      if (error instanceof Error && error.name === "AssertionError") throw error;
      return; // the core died under us
    }
  }
}

async function checkAfterRestart(home: string, tasks: string[], ledger: Ledger, round: number) {
  const report = await verifyHome(home);
  assertEquals(report.failure, null, `round ${round}: the log does not verify`);
  // A call cut off by the kill runs again with its key; the tool honours ctx.key.
  for (const [id, { task, key }] of ledger.inDoubt) {
    const again = await taskRequest(home, task, {
      method: "POST",
      path: "/call",
      body: { tool: "example.note", input: { text: key }, key },
    });
    assertEquals(again.body.ok, true, `round ${round}: ${id} ${JSON.stringify(again.body)}`);
    ledger.inDoubt.delete(id);
    ledger.acked.set(id, { task, key, answer: again.body, firstTry: false });
  }
  for (const task of tasks) {
    const keys = await noteKeys(home, task);
    assertEquals(new Set(keys).size, keys.length, `round ${round}: a note was written twice`);
    const shown = await taskRequest(home, task, { method: "GET", path: "/task" });
    const texts = new Set((shown.body.steps as { text: string }[]).map((s) => s.text));
    for (const step of ledger.steps.get(task)!) {
      assert(texts.has(step), `round ${round}: the acknowledged step ${step} is missing`);
    }
  }
  for (const [id, { task, key, answer }] of ledger.acked) {
    if (!key.startsWith(`r${round}-`) && !key.startsWith(`r${round - 1}-`)) continue;
    const again = await taskRequest(home, task, {
      method: "POST",
      path: "/call",
      body: { tool: "example.note", input: { text: key }, key },
    });
    assertEquals(again.body, answer, `round ${round}: ${id} answered differently`);
    assert((await noteKeys(home, task)).includes(`${task}.${key}`), `${id} has no note`);
  }
}

Deno.test("kill -9 of gurt serve under load, 20 rounds: the log verifies, no step lost, no key's tool ran twice", async () => {
  const home = await Deno.makeTempDir({ prefix: "gurt-crash-" });
  await Deno.mkdir(`${home}/grants`);
  await Deno.writeTextFile(`${home}/grants/note.toml`, grant({ tool: "example.note" }));
  let serve: ServeProcess | null = null;
  const delays: number[] = [];
  try {
    serve = await startServe(home);
    const tasks: string[] = [];
    for (let t = 0; t < TASKS; t++) tasks.push(await startTask(serve, { tools: ["example.note"] }));
    const ledger: Ledger = {
      inDoubt: new Map(),
      acked: new Map(),
      steps: new Map(tasks.map((t) => [t, new Set()])),
    };
    for (let round = 1; round <= ROUNDS; round++) {
      const stopped = { value: false };
      const callers = tasks.flatMap((task, t) =>
        Array.from(
          { length: CALLERS_PER_TASK },
          (_, c) => caller(home, task, `r${round}-t${t}c${c}`, ledger, stopped),
        )
      );
      // A random moment of the load: the kill is the event under test, not a wait for readiness.
      const delay = 20 + Math.floor(Math.random() * 120);
      delays.push(delay);
      await new Promise((resolve) => setTimeout(resolve, delay));
      await serve.kill9();
      stopped.value = true;
      await Promise.all(callers);
      serve = await startServe(home);
      assertEquals(serve.exited, null, `round ${round}: ${serve.stderr()}`);
      await checkAfterRestart(home, tasks, ledger, round);
    }
    // Every answered key's tool ran once: one successful Result record per key in the log, unless
    // its first run was cut off before it was answered (then the note's key kept it to one effect).
    const results = new Map<string, number>();
    for (const record of await auditRecords(home)) {
      if (record.event.type !== "result" || record.event.status !== "result") continue;
      const id = `${record.event.session}/${record.event.call}`;
      results.set(id, (results.get(id) ?? 0) + 1);
    }
    let total = 0;
    for (const task of tasks) {
      const keys = await noteKeys(home, task);
      assertEquals(new Set(keys).size, keys.length);
      total += keys.length;
    }
    assertEquals(total, ledger.acked.size, "every answered key has exactly one note");
    for (const [id, { firstTry }] of ledger.acked) {
      const runs = results.get(id) ?? 0;
      if (firstTry) assertEquals(runs, 1, `${id} was answered, yet its tool ran ${runs} times`);
      else assert(runs >= 1, `${id} never ran`);
    }
    assert(ledger.acked.size > ROUNDS, `too little load: ${ledger.acked.size} calls`);
  } catch (error) {
    console.error(`kill delays (ms) per round: ${delays.join(", ")}`);
    throw error;
  } finally {
    if (serve !== null && serve.exited === null) {
      await stopAllTasks(serve);
      await serve.stop();
    }
    await Deno.remove(home, { recursive: true });
  }
});
