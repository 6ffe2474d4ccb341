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
