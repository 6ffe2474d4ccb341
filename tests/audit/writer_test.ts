/** The writer: chain across days, the lock, sync before answer, group commit, failing closed. */
import {
  AuditLockedError,
  AuditUnavailableError,
  AuditWriter,
  realFileOps,
  verifyHome,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import {
  auditFile,
  DAY1,
  DAY2,
  lineHash,
  readLines,
  sampleEvent,
  settableClock,
  standardLog,
  steppingClock,
  tearingOps,
  withHome,
  writeLines,
} from "./helpers.ts";

Deno.test("records chain across a day boundary: the new file's line 1 chains from the old file's last line", () =>
  withHome(async (home) => {
    await standardLog(home);
    const day1 = await readLines(home, DAY1);
    const day2 = await readLines(home, DAY2);
    assertEquals([day1.length, day2.length], [5, 8]);
    const first = JSON.parse(day2[0]);
    assertEquals(first.prev, lineHash(day1[4]));
    assertEquals(JSON.parse(day1[0]).prev, "0".repeat(64));
    assertEquals(JSON.parse(day1[0]).seq, 0);
    assertEquals(first.time, "2026-11-29T00:00:00.000Z");
  }));

Deno.test("seq goes up by one per record across files, with no gap", () =>
  withHome(async (home) => {
    await standardLog(home);
    const lines = [...await readLines(home, DAY1), ...await readLines(home, DAY2)];
    assertEquals(lines.map((line) => JSON.parse(line).seq), [...Array(13).keys()]);
  }));

Deno.test("audit files and the lock are created with mode 0600", () =>
  withHome(async (home) => {
    await standardLog(home);
    for (const name of [DAY1, DAY2, ".lock"]) {
      assertEquals((await Deno.stat(auditFile(home, name))).mode! & 0o777, 0o600, name);
    }
  }));

Deno.test("a second writer on the same home is refused while the first holds the lock", () =>
  withHome(async (home) => {
    const { writer } = await AuditWriter.open(home);
    const error = await assertRejects(() => AuditWriter.open(home), AuditLockedError);
    assert(error.message.endsWith("see runbook.md#serve-already-running"), error.message);
    assertEquals(error.exitStatus, 1);
    writer.close();
    const again = await AuditWriter.open(home);
    again.writer.close();
  }));

Deno.test("a lock still held a moment after its core let go (a forked child's copy of the descriptor) is waited for, not taken for a second gurt serve", () =>
  withHome(async (home) => {
    const { writer } = await AuditWriter.open(home);
    await writer.close();
    // Another open file description of the lock holds it for 300 ms, as a child forked just before
    // the close does until it execs.
    const copy = await Deno.open(auditFile(home, ".lock"), { read: true, write: true });
    assert(await copy.tryLock(true));
    const letGo = setTimeout(() => copy.close(), 300);
    try {
      const started = Date.now();
      const { writer: next } = await AuditWriter.open(home);
      assert(Date.now() - started >= 250, "it waited for the lock");
      await next.close();
    } finally {
      clearTimeout(letGo);
    }
  }));

Deno.test("append resolves only after the fdatasync that covers its record has returned", () =>
  withHome(async (home) => {
    const events: string[] = [];
    let release!: () => void;
    let syncStarted!: () => void;
    const started = new Promise<void>((resolve) => (syncStarted = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { writer } = await AuditWriter.open(home, {
      fileOps: {
        write: (file, bytes) => {
          events.push(`write ${bytes.length}`);
          return realFileOps.write(file, bytes);
        },
        syncData: async (file) => {
          events.push("sync started");
          syncStarted();
          await gate;
          await realFileOps.syncData(file);
          events.push("sync returned");
        },
      },
    });
    try {
      const appended = writer.append(sampleEvent(0)).then((record) => {
        events.push(`resolved ${record.seq}`);
      });
      await started;
      await new Promise((resolve) => setTimeout(resolve, 0));
      assertEquals(events.filter((event) => event.startsWith("resolved")), []);
      release();
      await appended;
      assertEquals(events.slice(-2), ["sync returned", "resolved 0"]);
    } finally {
      writer.close();
    }
  }));

Deno.test("appends made while a sync runs share the next sync and none resolves before it", () =>
  withHome(async (home) => {
    let syncs = 0;
    let writes = 0;
    const resolvedAtSync: number[] = [];
    const { writer } = await AuditWriter.open(home, {
      fileOps: {
        write: (file, bytes) => {
          writes++;
          return realFileOps.write(file, bytes);
        },
        syncData: async (file) => {
          await realFileOps.syncData(file);
          syncs++;
        },
      },
    });
    try {
      const records = await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          writer.append(sampleEvent(i)).then((record) => {
            resolvedAtSync.push(syncs);
            return record;
          })),
      );
      assertEquals(records.map((record) => record.seq), [...Array(32).keys()]);
      assert(syncs < 32, `32 concurrent appends took ${syncs} syncs; they must share them`);
      assertEquals(syncs, writes, "each write is followed by its own sync");
      assert(resolvedAtSync.every((count) => count >= 1), "no append resolved before a sync");
      const report = await verifyHome(home);
      assertEquals([report.failure, report.records], [null, 32]);
    } finally {
      writer.close();
    }
  }));

Deno.test("after a failed write every later append is refused, though writes would now succeed", () =>
  withHome(async (home) => {
    let failNext = false;
    let writes = 0;
    const { writer } = await AuditWriter.open(home, {
      fileOps: {
        write: (file, bytes) => {
          writes++;
          if (failNext) return Promise.reject(new Error("No space left on device (os error 28)"));
          return realFileOps.write(file, bytes);
        },
      },
    });
    try {
      await writer.append(sampleEvent(0));
      failNext = true;
      const error = await assertRejects(() => writer.append(sampleEvent(1)), AuditUnavailableError);
      assertStringIncludes(error.message, "No space left on device");
      assert(error.message.endsWith("see runbook.md#audit-unavailable"), error.message);
      assert(writer.failed);
      failNext = false;
      const writesBefore = writes;
      await assertRejects(() => writer.append(sampleEvent(2)), AuditUnavailableError);
      assertEquals(writes, writesBefore, "a failed writer must not write again");
    } finally {
      writer.close();
    }
    const report = await verifyHome(home);
    assertEquals([report.failure, report.records], [null, 1]);
  }));

Deno.test("a failed sync fails the writer as a failed write does", () =>
  withHome(async (home) => {
    const { writer } = await AuditWriter.open(home, {
      fileOps: { syncData: () => Promise.reject(new Error("Input/output error (os error 5)")) },
    });
    try {
      await assertRejects(() => writer.append(sampleEvent(0)), AuditUnavailableError, "os error 5");
      assert(writer.failed);
      await assertRejects(() => writer.append(sampleEvent(1)), AuditUnavailableError);
    } finally {
      writer.close();
    }
  }));

Deno.test("a write torn by a crash is recovered by the next writer, and the chain verifies", () =>
  withHome(async (home) => {
    const clock = steppingClock("2026-11-29T10:00:00.000Z");
    const first = await AuditWriter.open(home, { clock });
    await first.writer.append(sampleEvent(0));
    first.writer.close();
    const torn = await AuditWriter.open(home, {
      clock,
      fileOps: tearingOps((bytes) => Math.floor(bytes.length / 3)),
    });
    await assertRejects(() => torn.writer.append(sampleEvent(1)), AuditUnavailableError);
    torn.writer.close();
    const { writer, notices } = await AuditWriter.open(home, { clock });
    try {
      assertEquals(notices.length, 1);
      assertStringIncludes(notices[0], "recovered a torn final line");
      assert(notices[0].endsWith("see runbook.md#audit-recovered"));
      const record = await writer.append(sampleEvent(2));
      assertEquals(record.seq, 2, "the Recovery took seq 1, the torn line's seq");
    } finally {
      writer.close();
    }
    const report = await verifyHome(home);
    assertEquals(report.failure, null);
    assertEquals(report.recoveries, [{ file: "2026-11-29.jsonl", line: 2 }]);
  }));

Deno.test("an event that does not fit its schema is refused and the writer stays usable", () =>
  withHome(async (home) => {
    const { writer } = await AuditWriter.open(home);
    try {
      const bad = { type: "vault_set", name: "K", value: "hunter2" } as unknown as Parameters<
        typeof writer.append
      >[0];
      await assertRejects(() => writer.append(bad), TypeError, "value");
      await assertRejects(
        () => writer.append({ type: "recovery", torn_bytes: 1, torn_sha256: "0".repeat(64) }),
        TypeError,
        "only the startup check",
      );
      assert(!writer.failed);
      assertEquals((await writer.append(sampleEvent(3))).seq, 0);
    } finally {
      writer.close();
    }
  }));

Deno.test("close while an append is in flight writes it first, then releases the lock", () =>
  withHome(async (home) => {
    const { writer } = await AuditWriter.open(home);
    const pending = writer.append(sampleEvent(0));
    writer.close();
    await assertRejects(() => writer.append(sampleEvent(1)), AuditUnavailableError, "closed");
    assertEquals((await pending).seq, 0);
    const again = await AuditWriter.open(home);
    again.writer.close();
    const report = await verifyHome(home);
    assertEquals([report.failure, report.records], [null, 1]);
  }));

Deno.test("append tells at once the seq each record is placed at, which is the seq it is written with, across a day", () =>
  withHome(async (home) => {
    const clock = settableClock("2026-11-28T23:59:59.990Z");
    const { writer } = await AuditWriter.open(home, { clock: clock.clock });
    try {
      await writer.append(sampleEvent(0));
      const placed: number[] = [];
      const appends = [];
      for (let i = 1; i <= 40; i++) {
        if (i === 20) clock.set("2026-11-29T00:00:00.010Z");
        appends.push(writer.append(sampleEvent(i), (seq) => placed.push(seq)));
        assertEquals(placed.length, i, "told before append returned");
      }
      const written = await Promise.all(appends);
      assertEquals(placed, written.map((record) => record.seq));
      assertEquals(placed, Array.from({ length: 40 }, (_, i) => i + 1));
      assertEquals((await readLines(home, DAY2)).length > 0, true);
      // An event that is not taken is placed nowhere, and the next one gets the next seq.
      let told = false;
      await assertRejects(
        () => writer.append({ type: "nonsense" } as never, () => (told = true)),
        TypeError,
        "the audit event is not valid",
      );
      assertEquals(told, false);
      let next = -1;
      await writer.append(sampleEvent(41), (seq) => (next = seq));
      assertEquals(next, 41);
    } finally {
      writer.close();
    }
    assertEquals((await verifyHome(home)).failure, null);
  }));

Deno.test("beforeWrite is given the first seq the writer will write, before it writes anything", () =>
  withHome(async (home) => {
    const firsts: number[] = [];
    const sizes: number[] = [];
    const size = async () => (await Deno.stat(auditFile(home, DAY2)).catch(() => null))?.size ?? 0;
    const beforeWrite = async (lostFrom: number) => {
      firsts.push(lostFrom);
      sizes.push(await size());
    };
    const clock = steppingClock("2026-11-29T10:00:00.000Z");
    const empty = await AuditWriter.open(home, { clock, beforeWrite });
    await empty.writer.append(sampleEvent(0));
    await empty.writer.append(sampleEvent(1));
    empty.writer.close();
    const again = await AuditWriter.open(home, { clock, beforeWrite });
    again.writer.close();
    // A torn last line: the Recovery record takes its seq, and is written only after the call.
    const torn = await AuditWriter.open(home, {
      clock,
      fileOps: tearingOps((bytes) => Math.floor(bytes.length / 3)),
    });
    await assertRejects(() => torn.writer.append(sampleEvent(2)), AuditUnavailableError);
    torn.writer.close();
    const tornSize = await size();
    const recovered = await AuditWriter.open(home, { clock, beforeWrite });
    const record = await recovered.writer.append(sampleEvent(3));
    recovered.writer.close();
    assertEquals(firsts, [0, 2, 2]);
    assertEquals(sizes[2], tornSize, "nothing was written before beforeWrite returned");
    assertEquals(record.seq, 3, "the Recovery record took seq 2");
  }));

Deno.test("beforeWrite is given an accepted break's seq, and when it throws, open fails having written nothing", () =>
  withHome(async (home) => {
    await standardLog(home);
    const lines = await readLines(home, DAY2);
    lines[2] = lines[2].slice(0, 30);
    await writeLines(home, DAY2, lines);
    const before = await Deno.readFile(auditFile(home, DAY2));
    await assertRejects(
      () =>
        AuditWriter.open(home, {
          acceptBreak: true,
          beforeWrite: () => Promise.reject(new Error("journals unreadable (test)")),
        }),
      Error,
      "journals unreadable (test)",
    );
    assertEquals(await Deno.readFile(auditFile(home, DAY2)), before);
    let first = -1;
    const { writer } = await AuditWriter.open(home, {
      acceptBreak: true,
      beforeWrite: (seq) => Promise.resolve(void (first = seq)),
    });
    writer.close();
    const written = await readLines(home, DAY2);
    const accepted = JSON.parse(written[written.length - 1]);
    assertEquals(accepted.event.type, "accepted_break");
    assertEquals(accepted.seq, first);
  }));

Deno.test("beforeWrite: a torn last line inside an accepted break keeps its seq as the first lost", () =>
  withHome(async (home) => {
    await standardLog(home); // seqs 0 to 12
    const lines = await readLines(home, DAY2);
    lines[2] = lines[2].slice(0, 30);
    await writeLines(home, DAY2, lines);
    // A Result record cut short by a crash, after the damage: seq 13 never reached the disk whole.
    await Deno.writeTextFile(auditFile(home, DAY2), '{"seq":13,"time":"2026-11-29', {
      append: true,
    });
    let lostFrom = -1;
    const { writer } = await AuditWriter.open(home, {
      acceptBreak: true,
      beforeWrite: (seq) => Promise.resolve(void (lostFrom = seq)),
    });
    writer.close();
    const written = await readLines(home, DAY2);
    const accepted = JSON.parse(written[written.length - 1]);
    assertEquals(accepted.event.type, "accepted_break");
    assertEquals([lostFrom, accepted.seq], [13, 14]);
  }));

Deno.test("open syncs the latest file before beforeWrite: what a killed writer left in the page cache is on disk before anything acts on it", () =>
  withHome(async (home) => {
    const steps: string[] = [];
    const fileOps = {
      syncData(file: Deno.FsFile) {
        steps.push("sync");
        return file.syncData();
      },
    };
    const beforeWrite = () => Promise.resolve(void steps.push("beforeWrite"));
    const fresh = await AuditWriter.open(home, { fileOps, beforeWrite });
    assertEquals(steps, ["beforeWrite"], "a fresh log has nothing to sync");
    await fresh.writer.append(sampleEvent(0));
    fresh.writer.close();
    steps.length = 0;
    const again = await AuditWriter.open(home, { fileOps, beforeWrite });
    again.writer.close();
    assertEquals(steps, ["sync", "beforeWrite"]);
  }));
