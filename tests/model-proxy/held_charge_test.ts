/**
 * A model answer's charge is never lost (issue 28, docs/audit.md#held-model-charges). Each billed
 * request's hold is in the task's journal before the request leaves; a streamed answer that reached
 * its client while the audit log failed (every write refused, as on a full disk), or whose core was
 * killed before its end, is charged at the next start: one cost record flagged recovered, of its
 * priced usage when the journal kept it, else the most the request could cost. The log verifies,
 * and the task's spent cents agree with it. Before, the charge stayed in memory and was lost.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { exactCents } from "../../mod/model-proxy/mod.ts";
import {
  auditRecords,
  gurt,
  type Json,
  type ServeProcess,
  startBox,
  startServe,
  startTask,
  stopAllTasks,
  waitFor,
} from "../kit/mod.ts";
import { canMount, withSmallDiskHome } from "../kit/small_disk.ts";
import { sse } from "./fake_services.ts";
import { startSseService } from "./scripted_service.ts";
import { endpointOf, postModel, sendModel, startFailingBox } from "./task_endpoint.ts";

const KEY = "sk-ant-held-charge-test";
const MODEL = "claude-sonnet-5-5";
/** What the service says the answer used: a million input tokens is a charge of whole cents. */
const TOKENS = { input: 1_000_000, output: 5, cacheWrite: 0, cacheRead: 0 };

/** The answer's events; the stream stops after message_start until `gate` opens. */
function answerWrites(): string[] {
  return [
    sse("message_start", {
      type: "message_start",
      message: {
        id: "msg_held",
        type: "message",
        role: "assistant",
        content: [],
        model: MODEL,
        usage: { input_tokens: TOKENS.input, output_tokens: 1 },
      },
    }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: TOKENS.output },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

/** A streamed Messages request to a task's model socket: the answer as it comes. */
async function streamFrom(
  socket: string,
  maxTokens: number,
): Promise<{ reader: ReadableStreamDefaultReader<string>; close(): void }> {
  const { response, client } = await sendModel(socket, {
    model: MODEL,
    max_tokens: maxTokens,
    stream: true,
    messages: [{ role: "user", content: "hi" }],
  });
  assertEquals(response.status, 200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  return { reader, close: () => client.close() };
}

/** Reads until what was read holds `text` (or the stream ends): all that was read. */
async function readUntil(reader: ReadableStreamDefaultReader<string>, text: string) {
  let read = "";
  while (!read.includes(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    read += value;
  }
  return read;
}

/** The task's journal lines. */
async function journalOf(home: string, task: string): Promise<Json[]> {
  const text = await Deno.readTextFile(`${home}/tasks/${task}/journal.jsonl`);
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

/** The task's cost records. */
async function costsOf(home: string, task: string): Promise<Json[]> {
  return (await auditRecords(home)).map((r) => r.event).filter((e) =>
    e.type === "cost" && e.task === task
  );
}

async function auditVerifies(home: string): Promise<void> {
  const run = await gurt(["--home", home, "audit", "verify"]);
  assertEquals(run.code, 0, run.stdout + run.stderr);
  assertStringIncludes(run.stdout, "audit: ok");
}

Deno.test("a streamed answer given while the audit log fails is charged at the next start: its usage, flagged recovered, once", async () => {
  const service = startSseService();
  let failing = false;
  const box = await startFailingBox(service.url, { fail: () => failing, key: KEY });
  try {
    const task = await box.startTask({ tools: [] });
    const gate = Promise.withResolvers<void>();
    service.answer({ writes: answerWrites(), gates: [gate.promise] });
    const stream = await streamFrom(endpointOf(task), 16);
    try {
      // Admitted and sent: the service has begun its answer. Now the log's writes fail.
      assertStringIncludes(await readUntil(stream.reader, "message_start"), "message_start");
      failing = true;
      gate.resolve();
      // The whole answer reaches the client.
      assertStringIncludes(await readUntil(stream.reader, "message_stop"), "message_stop");
    } finally {
      stream.close();
    }
    await waitFor(() => box.logs.some((line) => line.includes("was not recorded")), {
      what: "the charge's failure",
      seen: () => box.logs.join("\n"),
    });
    const due = Math.floor(exactCents(MODEL, TOKENS)!);
    assert(due > 0);
    assertEquals(await costsOf(box.home, task.id), []);

    failing = false;
    await box.restart();
    const costs = await costsOf(box.home, task.id);
    assertEquals(costs.length, 1, JSON.stringify(costs));
    assertEquals(costs[0].cents, due);
    assert(/^model hold [0-9a-f]{16} recovered$/.test(costs[0].what), costs[0].what);
    assertStringIncludes(box.core.notices.join("\n"), "see runbook.md#model-charge-recovered");
    const shown = await box.admin("GET", `/tasks/${task.id}`);
    assertEquals(shown.body.task.spentCents, due);
    await auditVerifies(box.home);

    // A second start finds the hold settled: nothing is charged twice.
    await box.restart();
    assertEquals((await costsOf(box.home, task.id)).length, 1);
    assertEquals((await box.admin("GET", `/tasks/${task.id}`)).body.task.spentCents, due);
  } finally {
    await box.close();
    await service.close();
  }
});

Deno.test("a task stopped while its charge was owed has it charged at the next start, though it is no longer live", async () => {
  const service = startSseService();
  let failing = false;
  const box = await startFailingBox(service.url, { fail: () => failing, key: KEY });
  try {
    const task = await box.startTask({ tools: [] });
    service.answer({ writes: answerWrites() });
    failing = true;
    const stream = await streamFrom(endpointOf(task), 16);
    try {
      await readUntil(stream.reader, "message_stop");
    } finally {
      stream.close();
    }
    await waitFor(() => box.logs.some((line) => line.includes("was not recorded")), {
      what: "the charge's failure",
      seen: () => box.logs.join("\n"),
    });
    assertEquals((await box.admin("POST", `/tasks/${task.id}/stop`)).status, 200);
    assertEquals((await box.admin("GET", `/tasks/${task.id}`)).body.task.state, "stopped");
    failing = false;
    await box.restart();
    const due = Math.floor(exactCents(MODEL, TOKENS)!);
    const costs = await costsOf(box.home, task.id);
    assertEquals(costs.map((cost) => cost.cents), [due], JSON.stringify(costs));
    assertEquals((await box.admin("GET", `/tasks/${task.id}`)).body.task.spentCents, due);
    // Its mark is gone with its charge: the next start reads no ended task's journal.
    assertEquals([...Deno.readDirSync(`${box.home}/broker/unsettled`)], []);
  } finally {
    await box.close();
    await service.close();
  }
});

Deno.test("a charge the log took but the journal lost is listed from the log at the next start, not charged twice", async () => {
  const service = startSseService();
  // Its writes never fail.
  const box = await startFailingBox(service.url, { fail: () => false, key: KEY });
  try {
    const task = await box.startTask({ tools: [] });
    service.answer({ writes: answerWrites() });
    const stream = await streamFrom(endpointOf(task), 16);
    try {
      await readUntil(stream.reader, "message_stop");
    } finally {
      stream.close();
    }
    const due = Math.floor(exactCents(MODEL, TOKENS)!);
    await waitFor(async () => (await costsOf(box.home, task.id)).length === 1, {
      what: "the charge's record",
    });
    const journal = `${box.home}/tasks/${task.id}/journal.jsonl`;
    // As a core killed between the record's sync and its journal line's would leave it.
    await box.restart({
      whileDown: async () => {
        const lines = (await Deno.readTextFile(journal)).split("\n").filter((line) =>
          line !== "" && JSON.parse(line).type !== "cost"
        );
        await Deno.writeTextFile(journal, lines.map((line) => line + "\n").join(""));
      },
    });
    assertEquals((await box.admin("GET", `/tasks/${task.id}`)).body.task.spentCents, due);
    const costs = await costsOf(box.home, task.id);
    assertEquals(costs.length, 1, JSON.stringify(costs));
    assert(/^model hold [0-9a-f]{16}$/.test(costs[0].what), costs[0].what);
    const listed = (await journalOf(box.home, task.id)).filter((line) => line.type === "cost");
    assertEquals(listed.map((line) => [line.cents, line.what]), [[due, costs[0].what]]);
  } finally {
    await box.close();
    await service.close();
  }
});

Deno.test("gurt serve killed with SIGKILL mid-answer: the next start charges the request the most it could cost, flagged recovered", async () => {
  const service = startSseService();
  const home = await Deno.makeTempDir({ prefix: "gurt-held-" });
  const env = { BOX_VAULT: `${home}/vault.env` };
  await Deno.writeTextFile(`${home}/vault.env`, `ANTHROPIC_API_KEY=${KEY}\n`, { mode: 0o600 });
  await Deno.writeTextFile(
    `${home}/gurt.toml`,
    `[models]\nanthropic_base_url = "${service.url}"\n[tasks]\nhome_bytes = ${64 * 1024 * 1024}\n`,
  );
  const gate = Promise.withResolvers<void>();
  let serve: ServeProcess | null = null;
  let killed = false;
  try {
    serve = await startServe(home, { env });
    assertEquals(serve.exited, null, serve.stderr());
    const task = await startTask(serve, { tools: [] });
    service.answer({ writes: answerWrites(), gates: [gate.promise] });
    // Asks for up to 100,000 tokens: the most it could cost is far more than what it said so far.
    const stream = await streamFrom(`${home}/tasks/${task}/model.sock`, 100_000);
    try {
      await readUntil(stream.reader, "message_start");
      await serve.kill9();
      killed = true;
    } finally {
      stream.close();
    }
    const holds = (await journalOf(home, task)).filter((line) => line.type === "model.hold");
    assertEquals(holds.length, 1, JSON.stringify(holds));
    assert(holds[0].cents > 0);
    assertEquals(await costsOf(home, task), []);

    serve = await startServe(home, { env });
    killed = false;
    assertEquals(serve.exited, null, serve.stderr());
    assertStringIncludes(serve.stderr(), "see runbook.md#model-charge-recovered");
    const costs = await costsOf(home, task);
    assertEquals(costs, [{
      type: "cost",
      task,
      cents: holds[0].cents,
      what: `model hold ${holds[0].hold} recovered`,
    }]);
    const shown = await serve.admin("GET", `/tasks/${task}`);
    assertEquals(shown.body.task.spentCents, holds[0].cents);
    // The spend by model has it too: one request at its most, its tokens unknown.
    const [row, ...more] = shown.body.task.spend;
    assertEquals(more, []);
    assertEquals(
      [row.model, row.requests, row.input, row.output, row.nanocents, row.bounded],
      [holds[0].model, 1, 0, 0, holds[0].cents * 1_000_000_000, 1],
    );
    await auditVerifies(home);
  } finally {
    gate.resolve();
    // A killed core's tasks are live: a core of its own stops them (their users, their homes).
    if (killed) serve = await startServe(home, { env });
    if (serve !== null && serve.exited === null) {
      await stopAllTasks(serve);
      await serve.stop();
    }
    await service.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test({
  name:
    "on a full disk a model request whose hold the journal cannot take is not sent: a 503 with the runbook pointer",
  ignore: !canMount(),
  fn: () =>
    withSmallDiskHome({ prefix: "gurt-held-full-", bytes: 2 * 1024 * 1024 }, async (home, disk) => {
      const service = startSseService();
      const box = await startBox({
        home,
        toml: `[models]\nanthropic_base_url = "${service.url}"\n`,
        core: {
          vault: {
            value: (name) => (name === "ANTHROPIC_API_KEY" ? KEY : undefined),
            names: () => [],
          },
        },
      });
      try {
        const task = await box.startTask({ tools: [] });
        await disk.fill();
        // Steps fill the journal's last page, until it takes no line.
        for (let i = 0; i < 200; i++) {
          if ((await task.request("POST", "/step", { text: "y".repeat(40) })).status === 507) break;
        }
        const refused = await postModel(task, {
          model: MODEL,
          max_tokens: 16,
          messages: [{ role: "user", content: "hi" }],
        });
        assertEquals(refused.status, 503, JSON.stringify(refused.body));
        assertEquals(refused.body.error.type, "api_error");
        assertStringIncludes(
          refused.body.error.message,
          "could not write down this request's cost",
        );
        assert(refused.body.error.message.endsWith("see runbook.md#disk-full"));
        assertEquals(service.requests.length, 0);
      } finally {
        await box.core.close();
        await service.close();
      }
    }),
});
