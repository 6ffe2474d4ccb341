/** The task journal: appends that arrive together are written together, in order, and synced. */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { type CallJournal, Journal } from "../../mod/broker/journal.ts";
import type { Json } from "../kit/mod.ts";
import { withHome } from "../kit/mod.ts";

Deno.test("200 concurrent appends land once each, in the order they were made, and a reopen reads them all", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/journal.jsonl`;
    const journal = await Journal.open(path);
    const time = new Date(0).toISOString();
    await Promise.all(
      Array.from(
        { length: 200 },
        (_, i) => journal.append({ type: "step", time, text: `step ${i}`, data: { i } }),
      ),
    );
    const expected = Array.from({ length: 200 }, (_, i) => `step ${i}`);
    assertEquals(journal.state.steps.map((s) => s.text), expected);
    const lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "");
    assertEquals(lines.map((l) => JSON.parse(l).text), expected);
    const reopened = await Journal.open(path);
    assertEquals(reopened.state.steps.map((s) => s.text), expected);
    assertEquals(reopened.state.skipped, 0);
    journal.close();
  }, { prefix: "gurt-journal-" });
});

Deno.test("an append that is not a journal line is refused and writes nothing; the next append still lands", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/journal.jsonl`;
    const journal = await Journal.open(path);
    await assertRejects(
      () => journal.append({ type: "cost", time: "t", cents: -1, what: "x" } as never),
      Error,
    );
    await journal.append({ type: "cost", time: "t", cents: 3, what: "x" });
    assertEquals(journal.state.spentCents, 3);
    assertEquals((await Deno.readTextFile(path)).split("\n").filter((l) => l !== "").length, 1);
    journal.close();
  }, { prefix: "gurt-journal-" });
});

Deno.test("appends made after close still land in order, each opening the file, and close leaves nothing open", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/journal.jsonl`;
    const journal = await Journal.open(path);
    const time = new Date(0).toISOString();
    const first = journal.append({ type: "step", time, text: "before", data: null });
    journal.close(); // while the first write is under way: the file is closed after it
    await first;
    await journal.append({ type: "step", time, text: "after", data: null });
    await journal.append({ type: "cost", time, cents: 2, what: "x" });
    const lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "");
    assertEquals(lines.map((l) => JSON.parse(l).type), ["step", "step", "cost"]);
    assertEquals(journal.state.steps.map((s) => s.text), ["before", "after"]);
    assertEquals(journal.state.spentCents, 2);
  }, { prefix: "gurt-journal-" });
});

Deno.test("every string of an appended line goes through the journal's redactor, in the file and in the state", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/journal.jsonl`;
    const redact = (text: string) => text.replaceAll("hunter22", "[a vault key]");
    const journal = await Journal.open(path, { redact });
    const time = new Date(0).toISOString();
    await journal.append({ type: "step", time, text: "pw hunter22", data: { pw: "hunter22" } });
    assertEquals(journal.state.steps, [{
      text: "pw [a vault key]",
      data: { pw: "[a vault key]" },
    }]);
    assertEquals(JSON.parse(await Deno.readTextFile(path)).text, "pw [a vault key]");
    journal.close();
  }, { prefix: "gurt-journal-" });
});

const T = new Date(0).toISOString();
const OPTIONS = { clock: () => new Date(0), log: () => {} };
const ran = (key: string, result: number | null, cost: number) => ({
  type: "tool.result" as const,
  time: T,
  key,
  tool: "example.spend",
  answer: { ok: true as const, output: { key } },
  cost,
  ...(result === null ? {} : { result }),
});

/** The journal of call `key` of task t1, for example.spend. */
function callOf(journal: Journal, key: string): CallJournal {
  const inputSha256 = "0".repeat(64);
  return journal.call({ task: "t1", key, tool: "example.spend", inputSha256 }, OPTIONS);
}

async function fileLines(path: string): Promise<Json[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test("a call's tool.call line is in the file once begun, and synced by the next append's sync, by sync, or by close", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/journal.jsonl`;
    const journal = await Journal.open(path);
    const keys = async () => (await fileLines(path)).map((l) => l.key ?? l.text);
    callOf(journal, "a").begin(1, { cents: 1 });
    assertEquals(await keys(), ["a"]);
    assertEquals(journal.state.keys.has("a"), false, "the state reflects it once synced");
    await journal.append({ type: "step", time: T, text: "b", data: null });
    assert(journal.state.keys.has("a"), "the append's sync covers it");

    const c = callOf(journal, "c");
    c.begin(2, { cents: 1 });
    const synced = journal.appended();
    c.sync();
    await synced;
    assert(journal.state.keys.has("c"));

    // While a sync is under way, a tool.call line waits its turn like an append: order is kept.
    const d = journal.append({ type: "step", time: T, text: "d", data: null });
    callOf(journal, "e").begin(3, { cents: 1 });
    const f = journal.append({ type: "step", time: T, text: "f", data: null });
    await Promise.all([d, f]);
    assertEquals(await keys(), ["a", "b", "c", "d", "e", "f"]);
    assert(journal.state.keys.has("e"));

    // Close syncs a line still waiting, then lets the file go.
    callOf(journal, "g").begin(4, { cents: 1 });
    const closed = journal.appended();
    journal.close();
    await closed;
    assert(journal.state.keys.has("g"));
  }, { prefix: "gurt-journal-" });
});

Deno.test("a call's tool.result line is synced beside its Result record: on disk, it answers its key only once the record is too; a record that fails voids it", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/journal.jsonl`;
    const journal = await Journal.open(path);
    const answer = { ok: true as const, output: { paid: 5 } };

    const k1 = callOf(journal, "k1");
    k1.begin(7, { cents: 5 });
    const record = Promise.withResolvers<boolean>();
    const finished = k1.finish(answer, { cost: 5, record: { seq: 9, synced: record.promise } });
    await journal.appended();
    const written = (await fileLines(path)).map((l) => [l.type, l.result]);
    assertEquals(written, [["tool.call", undefined], ["tool.result", 9]]);
    assertEquals([journal.state.calls.has("k1"), journal.state.spentCents], [false, 0]);
    record.resolve(true);
    assertEquals(await finished, true);
    assertEquals([journal.state.calls.get("k1"), journal.state.spentCents], [answer, 5]);

    const k2 = callOf(journal, "k2");
    k2.begin(10, { cents: 3 });
    const failed = { seq: 11, synced: Promise.resolve(false) };
    assertEquals(await k2.finish(answer, { cost: 3, record: failed }), false);
    const last = (await fileLines(path)).slice(-2).map((l) => [l.type, l.key, l.result]);
    assertEquals(last, [["tool.result", "k2", 11], ["tool.unrecorded", "k2", 11]]);
    for (const state of [journal.state, (await Journal.open(path)).state]) {
      assertEquals([state.calls.has("k2"), state.spentCents], [false, 5]);
    }

    // A record whose seq was not told: the line follows it, once it is on disk, without a seq.
    const k3 = callOf(journal, "k3");
    k3.begin(12, { cents: 1 });
    const untold = Promise.withResolvers<boolean>();
    const after = k3.finish(answer, { cost: 1, record: { seq: null, synced: untold.promise } });
    const callSynced = journal.appended();
    k3.sync();
    await callSynced; // the tool.call line is on disk; the record is not yet
    assertEquals((await fileLines(path)).filter((l) => l.key === "k3").length, 1, "only tool.call");
    untold.resolve(true);
    assertEquals(await after, true);
    assertEquals((await fileLines(path)).at(-1).result, undefined);
    assertEquals(journal.state.spentCents, 6);

    // A denial has no record: its line answers the key once synced.
    const denial = { ok: false as const, error: "Denied: no grant allows this call." };
    assertEquals(await callOf(journal, "k4").finish(denial, { cost: 0 }), true);
    assertEquals(journal.state.calls.get("k4"), denial);
    journal.close();
  }, { prefix: "gurt-journal-" });
});

Deno.test("a tool.unrecorded line voids the answer and the cost of the result line it names, and only that one", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/journal.jsonl`;
    const journal = await Journal.open(path);
    await journal.append(ran("k1", 3, 2));
    await journal.append(ran("k2", 4, 10));
    await journal.append(ran("k3", null, 0)); // a denial: no Result record
    await journal.append({ type: "tool.unrecorded", time: T, key: "k2", result: 4 });
    // Decided afresh, k2 is answered again under a new Result record; a stale void changes nothing.
    await journal.append(ran("k2", 9, 10));
    await journal.append({ type: "tool.unrecorded", time: T, key: "k2", result: 4 });
    await journal.append({ type: "tool.unrecorded", time: T, key: "k3", result: 0 });
    for (const state of [journal.state, (await Journal.open(path)).state]) {
      assertEquals([...state.calls.keys()].sort(), ["k1", "k2", "k3"]);
      assertEquals(state.spentCents, 12);
      assertEquals(state.recorded.get("k2"), { result: 9, cost: 10 });
      assertEquals(state.recorded.has("k3"), false);
    }
    await journal.append({ type: "tool.unrecorded", time: T, key: "k2", result: 9 });
    const reopened = await Journal.open(path);
    assertEquals([...reopened.state.calls.keys()].sort(), ["k1", "k3"]);
    assertEquals(reopened.state.spentCents, 2);
    journal.close();
  }, { prefix: "gurt-journal-" });
});

Deno.test("a journal that ends in a torn line: the next line is written after a newline, so it and the lines before it are kept", async () => {
  await withHome(async (dir) => {
    for (const kind of ["append", "unsynced"] as const) {
      const path = `${dir}/${kind}.jsonl`;
      const first = await Journal.open(path);
      await first.append(ran("k1", 3, 2));
      first.close();
      await Deno.writeTextFile(path, '{"type":"step","time":"t","te', { append: true }); // cut short
      const journal = await Journal.open(path);
      assertEquals(journal.state.skipped, 1);
      if (kind === "append") {
        await journal.append({ type: "tool.unrecorded", time: T, key: "k1", result: 3 });
      } else {
        const synced = journal.appended();
        const call = callOf(journal, "after");
        call.begin(1, null);
        call.sync();
        await synced;
      }
      await journal.append({ type: "step", time: T, text: "last", data: null });
      journal.close();
      const reopened = await Journal.open(path);
      assertEquals(reopened.state.skipped, 1, `${kind}: only the torn line itself`);
      const steps = reopened.state.steps.map((step) => step.text);
      if (kind === "append") {
        assertEquals(reopened.state.calls.has("k1"), false, "the void after the torn line holds");
        assertEquals([reopened.state.spentCents, steps], [0, ["last"]]);
      } else {
        assertEquals([steps, reopened.state.keys.has("after")], [["last"], true]);
      }
    }
  }, { prefix: "gurt-journal-" });
});
