/**
 * The test worker: runs its script one broker request per line, keeps the number of the last line
 * it finished in its step data, and resumes after that line when it is restarted, whether the
 * worker or the core was killed mid-script.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  grant,
  gurtArgs,
  type Json,
  noteKeys,
  pendingApproval,
  startBox,
  startServe,
  startTask,
  until,
} from "../kit/mod.ts";

// Line 3 waits on the owner: the moment at which the test kills the worker or the core.
const SCRIPT = [
  `POST /call {"tool":"example.note","input":{"text":"one"}}`,
  `POST /call {"tool":"example.note","input":{"text":"two"}}`,
  `POST /call {"tool":"example.spend","input":{"cents":5}}`,
  `POST /call {"tool":"example.note","input":{"text":"four"}}`,
].join("\n") + "\n";

const GRANTS = {
  note: grant({ tool: "example.note" }),
  spend: grant({ tool: "example.spend", mode: "ask" }),
};

function finishedLines(task: Json): number[] {
  return (task.steps as { data: { line?: number } }[]).map((s) => s.data.line)
    .filter((n): n is number => typeof n === "number");
}

function spawnWorker(socket: string, task: string, script: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["test-worker", "--script", script]),
    env: { BOX_SOCKET: socket, BOX_TASK: task, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("a test worker killed mid-script resumes after its last finished line when restarted", async () => {
  const box = await startBox({ grants: GRANTS });
  const script = `${box.home}/script.txt`;
  await Deno.writeTextFile(script, SCRIPT);
  try {
    const task = await box.startTask({ tools: ["example.note", "example.spend"] });
    const first = spawnWorker(task.socket, task.id, script);
    await pendingApproval(box, task);
    first.kill("SIGKILL");
    await first.output();
    assertEquals(finishedLines((await task.request("GET", "/task")).body), [1, 2]);
    // The killed worker's request was dropped, so its approval is withdrawn.
    await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 0);

    const second = spawnWorker(task.socket, task.id, script);
    const id = await pendingApproval(box, task);
    assertEquals((await box.admin("POST", `/approvals/${id}/approve`)).status, 200);
    const out = await second.output();
    const stdout = new TextDecoder().decode(out.stdout);
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    // The second run started at line 3: lines 1 and 2 were not sent again.
    assertEquals(stdout.split("\n").filter((l) => l !== "").map((l) => l.split(":")[0]), [
      "line 3",
      "line 4",
    ]);
    assertEquals(finishedLines((await task.request("GET", "/task")).body), [1, 2, 3, 4]);
    assertEquals(await noteKeys(box.home, task.id), [
      `${task.id}.line-1`,
      `${task.id}.line-2`,
      `${task.id}.line-4`,
    ]);
  } finally {
    await box.close();
  }
});

Deno.test("gurt serve killed mid-script restarts the test worker, which resumes after its last finished line", async () => {
  const home = await Deno.makeTempDir({ prefix: "gurt-worker-" });
  await Deno.mkdir(`${home}/grants`);
  for (const [id, toml] of Object.entries(GRANTS)) {
    await Deno.writeTextFile(`${home}/grants/${id}.toml`, toml);
  }
  let serve = await startServe(home);
  try {
    assertEquals(serve.exited, null, serve.stderr());
    const task = await startTask(serve, {
      tools: ["example.note", "example.spend"],
      worker: { kind: "test", scriptText: SCRIPT },
    }).catch((error) => {
      throw new Error(`${error.message}\n${serve.stderr()}`);
    });
    const pending = async () => {
      let id = -1;
      await until(async () => {
        const items = (await serve.admin("GET", "/approvals")).body.items;
        if (items.length > 0) id = items[0].approval;
        return items.length > 0;
      }, 20_000);
      return id;
    };
    await pending();
    await serve.kill9();

    serve = await startServe(home);
    assertEquals(serve.exited, null, serve.stderr());
    assertStringIncludes(serve.stderr(), `reopened tasks ${task}`);
    const id = await pending();
    assertEquals((await serve.admin("POST", `/approvals/${id}/approve`)).status, 200);
    await until(
      async () => (await serve.admin("GET", `/tasks/${task}`)).body.task.state === "done",
      20_000,
    );
    const shown = await serve.admin("GET", `/tasks/${task}`);
    const lines = (shown.body.journal as Json[]).filter((l) => l.type === "step")
      .map((l) => l.data.line);
    assertEquals(lines, [1, 2, 3, 4]);
    assertEquals(await noteKeys(home, task), [
      `${task}.line-1`,
      `${task}.line-2`,
      `${task}.line-4`,
    ]);
    const log = await Deno.readTextFile(`${home}/tasks/${task}/worker.log`);
    // Lines 1 and 2 ran once, in the first worker; the second began at line 3.
    assertEquals(log.split("\n").filter((l) => l.startsWith("line 1:")).length, 1);
    assertEquals(log.split("\n").filter((l) => l.startsWith("line 2:")).length, 1);
    assert(log.includes("line 4:"));
    // A done task's socket is gone.
    assertEquals(await Deno.lstat(`${home}/tasks/${task}/broker.sock`).catch(() => null), null);
  } finally {
    assertEquals((await serve.stop()).code, 0);
    await Deno.remove(home, { recursive: true });
  }
});
