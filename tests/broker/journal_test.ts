/** The task journal: appends that arrive together are written together, in order, and synced. */
import { assert, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { Journal } from "../../mod/broker/mod.ts";

Deno.test("200 concurrent appends land once each, in the order they were made, and a reopen reads them all", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-journal-" });
  try {
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
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an append that is not a journal line is refused and writes nothing; the next append still lands", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-journal-" });
  try {
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
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("appends made after close still land in order, each opening the file, and close leaves nothing open", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-journal-" });
  try {
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
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a prepared line is checked when prepared, lands when appended, and only in the journal that prepared it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-journal-" });
  try {
    const path = `${dir}/journal.jsonl`;
    const redact = (text: string) => text.replaceAll("hunter22", "[a vault key]");
    const journal = await Journal.open(path, { redact });
    const other = await Journal.open(`${dir}/other.jsonl`);
    const time = new Date(0).toISOString();
    assertThrows(() => journal.prepare({ type: "cost", time, cents: -1, what: "x" }), Error);
    const prepared = journal.prepare({ type: "step", time, text: "pw hunter22", data: null });
    await assertRejects(() => other.append(prepared), TypeError);
    await journal.append(prepared);
    assertEquals(journal.state.steps, [{ text: "pw [a vault key]", data: null }]);
    assertEquals(JSON.parse(await Deno.readTextFile(path)).text, "pw [a vault key]");
    journal.close();
    other.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a line appended unsynced is in the file at once, and synced by the next append's sync or by syncUnsynced", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-journal-" });
  try {
    const path = `${dir}/journal.jsonl`;
    const journal = await Journal.open(path);
    const time = new Date(0).toISOString();
    const lines = async () =>
      (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "").map((l) =>
        JSON.parse(l).text
      );
    const first = journal.appendUnsynced({ type: "step", time, text: "a", data: null });
    assertEquals(await lines(), ["a"]);
    assert(first.waiting());
    const second = journal.append({ type: "step", time, text: "b", data: null });
    assert(!first.waiting(), "the append's sync covers it");
    await Promise.all([first.synced, second]);
    assertEquals(journal.state.steps.map((s) => s.text), ["a", "b"]);

    const third = journal.appendUnsynced({ type: "step", time, text: "c", data: null });
    assert(third.waiting());
    journal.syncUnsynced();
    assert(!third.waiting());
    await third.synced;
    assertEquals(journal.state.steps.map((s) => s.text), ["a", "b", "c"]);

    // While a sync is under way, an unsynced line waits its turn like an append: order is kept.
    const fourth = journal.append({ type: "step", time, text: "d", data: null });
    const fifth = journal.appendUnsynced({ type: "step", time, text: "e", data: null });
    assert(!fifth.waiting());
    const sixth = journal.append({ type: "step", time, text: "f", data: null });
    await Promise.all([fourth, fifth.synced, sixth]);
    assertEquals(await lines(), ["a", "b", "c", "d", "e", "f"]);

    // Close syncs a line still waiting, then lets the file go.
    const last = journal.appendUnsynced({ type: "step", time, text: "g", data: null });
    journal.close();
    await last.synced;
    assertEquals(journal.state.steps.length, 7);
    await assertRejects(
      () => journal.appendUnsynced({ type: "cost", time, cents: -1, what: "x" }).synced,
      Error,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const T = new Date(0).toISOString();
const ran = (key: string, result: number | null, cost: number) => ({
  type: "tool.result" as const,
  time: T,
  key,
  tool: "example.spend",
  answer: { ok: true as const, output: { key } },
  cost,
  ...(result === null ? {} : { result }),
});

Deno.test("a held line is on disk when its append resolves, but answers its key only once committed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-journal-" });
  try {
    const path = `${dir}/journal.jsonl`;
    const journal = await Journal.open(path);
    const line = journal.prepare(ran("k1", 7, 5));
    await journal.append(line, { held: true });
    assertEquals(JSON.parse((await Deno.readTextFile(path)).trim()).result, 7);
    assertEquals([journal.state.calls.has("k1"), journal.state.spentCents], [false, 0]);
    journal.commit(line);
    assertEquals(journal.state.calls.get("k1"), { ok: true, output: { key: "k1" } });
    assertEquals(journal.state.spentCents, 5);
    const other = await Journal.open(`${dir}/other.jsonl`);
    assertThrows(() => other.commit(line), TypeError, "a line of another journal");
    assertEquals(other.state.calls.size, 0);
    // Appended, unsynced or synced, by the journal that prepared it only.
    const call = journal.prepare({
      type: "tool.call",
      time: T,
      key: "k2",
      tool: "example.spend",
      input: { cents: 1 },
      decision: 8,
    });
    await assertRejects(() => other.appendUnsynced(call).synced, TypeError, "another journal");
    await assertRejects(() => other.append(call), TypeError, "another journal");
    assertEquals(await Deno.readTextFile(`${dir}/other.jsonl`).catch(() => ""), "");
    const unsynced = journal.appendUnsynced(call);
    journal.syncUnsynced();
    await unsynced.synced;
    assertEquals(JSON.parse((await Deno.readTextFile(path)).trim().split("\n")[1]), call.entry);
    journal.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a tool.unrecorded line voids the answer and the cost of the result line it names, and only that one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-journal-" });
  try {
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
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a journal that ends in a torn line: the next line is written after a newline, so it and the lines before it are kept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-journal-" });
  try {
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
        const line = journal.appendUnsynced({ type: "step", time: T, text: "after", data: null });
        journal.syncUnsynced();
        await line.synced;
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
        assertEquals(steps, ["after", "last"]);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
