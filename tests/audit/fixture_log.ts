/**
 * The checked-in fixture home `tests/fixtures/audit/home`: a log written by the real writer with
 * every event type and everything `gurt audit verify` reports besides a failure. Regenerate with
 * `deno run -A tests/audit/fixture_log.ts` (a test checks the writer still writes it byte for byte).
 */
import { type AuditEvent, AuditWriter } from "../../mod/audit/mod.ts";
import { settableClock, tearingOps } from "./helpers.ts";

/** Where the fixture home is checked in. */
export const FIXTURE_HOME = new URL("../fixtures/audit/home", import.meta.url).pathname;

const GRANT_SHA = "5d41402abc4b2a76b9719d911017c592ae1a4b4bd0f5e3c0a6f6b6f1b1d2c3e4";
const CONTENT_SHA = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

function decision(call: string, outcome: "allowed" | "ask" | "denied"): AuditEvent {
  return {
    type: "decision",
    session: "task-7",
    call,
    tool: call === "c6" ? "http_fetch" : "read_file",
    arguments: call === "c6"
      ? '{"url":"https://evil.example/x"}'
      : `{"path":"/home/kyle/notes/${call}.md"}`,
    outcome: outcome === "denied" ? { outcome, reason: "no_grant" } : { outcome },
    grant: outcome === "denied" ? null : "notes-read",
    grant_sha256: outcome === "denied" ? null : GRANT_SHA,
    taint: "private",
    untrusted: false,
  };
}

function approval(
  call: string,
  seq: number,
  answer: "approved" | "refused" | "expired",
): AuditEvent {
  return {
    type: "approval",
    session: "task-7",
    call,
    decision: seq,
    answer,
    by: answer === "expired" ? null : "owner",
    reason: answer === "refused" ? "not that file" : null,
    outcome: answer === "approved"
      ? { outcome: "allowed" }
      : { outcome: "denied", reason: `approval_${answer}` },
    grant: answer === "approved" ? "notes-read" : null,
    grant_sha256: answer === "approved" ? GRANT_SHA : null,
    taint: "private",
    untrusted: false,
  };
}

function result(call: string, seq: number, status: "result" | "failed"): AuditEvent {
  return {
    type: "result",
    session: "task-7",
    call,
    decision: seq,
    status,
    class: "private",
    untrusted: false,
    truncated: false,
    bytes: 5,
    sha256: CONTENT_SHA,
    taint_after: "private",
  };
}

/** Writes the fixture log into `home` (which must have no audit log yet). */
export async function writeFixtureLog(home: string): Promise<void> {
  const time = settableClock("2026-11-28T21:00:00.000Z");
  let minute = 0;
  const tick = () =>
    time.set(new Date(Date.parse("2026-11-28T21:00:00.000Z") + 60_000 * minute++).toISOString());
  const first = await AuditWriter.open(home, { clock: time.clock });
  const append = async (event: AuditEvent): Promise<number> => {
    tick();
    return (await first.writer.append(event)).seq;
  };
  await append({
    type: "task_started",
    task: "task-7",
    worker: "gurt loop",
    tools: ["read_file", "http_fetch"],
    budget_cents: 200,
  });
  const c1 = await append(decision("c1", "allowed"));
  await append(result("c1", c1, "result"));
  const c2 = await append(decision("c2", "ask"));
  await append(approval("c2", c2, "approved"));
  await append(result("c2", c2, "failed"));
  const c3 = await append(decision("c3", "ask"));
  await append(approval("c3", c3, "refused"));
  const c4 = await append(decision("c4", "ask"));
  await append(approval("c4", c4, "expired"));
  await append(decision("c5", "ask"));
  await append(decision("c6", "denied"));
  await append(decision("c7", "allowed"));
  await append({ type: "vault_set", name: "NOTES_TOKEN" });
  await append({ type: "cost", task: "task-7", cents: 12, what: "usage" });
  first.writer.close();
  // A crash in the middle of the next write: 25 bytes of its line reach the disk.
  tick();
  const torn = await AuditWriter.open(home, { clock: time.clock, fileOps: tearingOps(() => 25) });
  await torn.writer.append({ type: "vault_removed", name: "NOTES_TOKEN" }).catch(() => undefined);
  torn.writer.close();
  // The next start, after midnight, recovers it in the torn line's file; then the clock steps
  // back over midnight once.
  time.set("2026-11-29T00:05:00.000Z");
  const next = await AuditWriter.open(home, { clock: time.clock });
  await next.writer.append({ type: "vault_removed", name: "NOTES_TOKEN" });
  time.set("2026-11-28T23:59:30.000Z");
  await next.writer.append({ type: "task_ended", task: "task-7", state: "done", reason: null });
  next.writer.close();
  await Deno.remove(`${home}/audit/.lock`);
}

if (import.meta.main) {
  await Deno.remove(FIXTURE_HOME, { recursive: true }).catch(() => undefined);
  await Deno.mkdir(FIXTURE_HOME, { recursive: true });
  await writeFixtureLog(FIXTURE_HOME);
  console.log(`wrote ${FIXTURE_HOME}`);
}
