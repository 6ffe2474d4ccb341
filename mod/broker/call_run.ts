/**
 * POST /call's run, once its Decision record is on disk (seed 002 §5, write order): the tool.call
 * line, the tool, the taint raised, the Result record and the tool.result line synced side by side,
 * and only then the answer. call_path.ts decides and hands the call over here.
 */
import type { Decision } from "../policy/mod.ts";
import { RunError, runSpecFor } from "../runtime/mod.ts";
import type { AppTool } from "../tools/mod.ts";
import type { KeyedCall } from "./call_path.ts";
import type { BrokerDeps } from "./deps.ts";
import type { CallAnswer, JournalLine, PreparedLine } from "./journal.ts";
import { redactValue } from "./redact_value.ts";
import { recordResult, type RunOutcome } from "./result_record.ts";
import type { TaskHandle } from "./task_handle.ts";

/** How a call's flow ended: with its answer, or withdrawn (see handleCall). */
export type Ended = { kind: "answer"; answer: CallAnswer } | { kind: "withdrawn" };

/** The tool.call line of a call allowed by the Decision record `seq`: what the task asked. */
export function callEntry(deps: BrokerDeps, body: KeyedCall, seq: number): JournalLine {
  return {
    type: "tool.call",
    time: deps.clock().toISOString(),
    key: body.key,
    tool: body.tool,
    input: redactValue(body.input, deps.redact),
    decision: seq,
    input_sha256: body.inputSha256,
  };
}

/** What a run needs to know of the call it runs. */
export interface RunCall {
  app: AppTool<unknown> | undefined;
  input: unknown;
  cost: number;
  seq: number;
  decision: Decision;
  /** Its tool.call line, where made while the Decision record was synced. */
  callLine: PreparedLine | null;
}

/** Runs an allowed call and records it; the tool.call line is synced even where nothing follows. */
export async function run(
  deps: BrokerDeps,
  task: TaskHandle,
  body: KeyedCall,
  call: RunCall,
): Promise<Ended> {
  try {
    return await runAndRecord(deps, task, body, call);
  } finally {
    task.journal.syncUnsynced(); // the tool.call line, where no tool.result line followed it
  }
}

async function runAndRecord(
  deps: BrokerDeps,
  task: TaskHandle,
  body: KeyedCall,
  call: RunCall,
): Promise<Ended> {
  // The tool.call line is what the task asked; nothing waits on it being on disk (the Decision
  // record, synced before the run, holds the same). It is in the file before the tool runs. A
  // tool that waits on anything (every built-in tool, most app tools) runs while the line is
  // synced; for one whose run has ended at once, the line is synced with the tool.result line that
  // follows it in the same file (one sync instead of a second one beside the Result record's).
  const callLine = task.journal.appendUnsynced(call.callLine ?? callEntry(deps, body, call.seq));
  callLine.synced.catch(() => {}); // awaited below
  let outcome: RunOutcome;
  let output: unknown = null;
  try {
    if (call.app !== undefined) {
      const app = call.app;
      const appName = app.name.slice(0, app.name.indexOf("."));
      const running = app.run({
        task: task.id,
        key: `${task.id}.${body.key}`,
        home: deps.home,
        secret: (name) => deps.readSecret(appName, app.secrets, name),
      }, call.input);
      if (!(await settledAtOnce(running))) task.journal.syncUnsynced();
      output = redactValue(await running, deps.redact);
      outcome = { status: "result", content: JSON.stringify(output ?? null), truncated: false };
    } else {
      task.journal.syncUnsynced();
      const ran = await deps.runtime.run(runSpecFor(call.decision));
      output = { content: deps.redact(ran.content), truncated: ran.truncated };
      outcome = { status: "result", content: deps.redact(ran.content), truncated: ran.truncated };
    }
  } catch (error) {
    const message = error instanceof RunError
      ? error.message
      : `the tool failed: ${deps.redact(describe(error))}`;
    outcome = { status: "failed", content: message, truncated: false };
  }
  const answer: CallAnswer = outcome.status === "result"
    ? { ok: true, output }
    : { ok: false, error: outcome.content };
  const resultEntry = (result: number | null): JournalLine => ({
    type: "tool.result",
    time: deps.clock().toISOString(),
    key: body.key,
    tool: body.tool,
    answer,
    cost: outcome.status === "result" ? call.cost : 0,
    ...(result === null ? {} : { result }),
    input_sha256: body.inputSha256,
  });
  const ids = { task, key: body.key, tool: body.tool, seq: call.seq, decision: call.decision };
  // Where the audit appender tells the Result record's seq, the tool.result line naming it is
  // written and synced beside the record: one sync's wait instead of two in a row. The line is
  // held: it answers the key (and charges the cost) only once both are on disk, and where the
  // record fails, or the core dies first, a tool.unrecorded line voids it (here, or at the next
  // start: recoverTaskJournals), so no answer ever goes out without its Result record. Where the
  // seq is not told, the line is prepared during the record's sync and appended after it.
  let held = null as { line: PreparedLine; synced: Promise<unknown>; seq: number } | null;
  let resultLine: () => JournalLine | PreparedLine = () => resultEntry(null);
  try {
    const recorded = await recordResult(deps, ids, {
      outcome,
      started: (seq) => {
        try {
          if (seq === null) {
            const prepared = task.journal.prepare(resultEntry(null));
            resultLine = () => prepared;
            return;
          }
          const line = task.journal.prepare(resultEntry(seq));
          // Its sync covers the tool.call line where that one's has not been started.
          const synced = Promise.all([callLine.synced, task.journal.append(line, { held: true })]);
          synced.catch(() => {}); // awaited below
          held = { line, synced, seq };
        } catch {
          // made again below, and its error thrown there as an append's would be
        }
      },
    });
    if (!recorded) {
      if (held !== null) await voidHeld(deps, task, body.key, held);
      return { kind: "answer", answer: { ok: false, error: "the result could not be recorded" } };
    }
    if (held !== null) {
      await held.synced;
      task.journal.commit(held.line);
    } else if (callLine.waiting()) {
      await Promise.all([callLine.synced, task.journal.append(resultLine())]);
    } else {
      await callLine.synced;
      await task.journal.append(resultLine());
    }
    return { kind: "answer", answer };
  } finally {
    // After the line that charges the cost was applied (or will never be).
    task.reservedCents -= call.cost;
  }
}

/**
 * Voids a held tool.result line whose Result record failed: the line may be on disk, and after a
 * restart it must not answer its key with content the log never recorded.
 */
async function voidHeld(
  deps: BrokerDeps,
  task: TaskHandle,
  key: string,
  held: { synced: Promise<unknown>; seq: number },
): Promise<void> {
  await held.synced.catch(() => {});
  await task.journal.append({
    type: "tool.unrecorded",
    time: deps.clock().toISOString(),
    key,
    result: held.seq,
  }).catch((error) =>
    deps.log(
      `gurt: the result line of a call of task ${task.id} could not be voided (${
        describe(error)
      }); the next start voids it`,
    )
  );
}

const NOT_YET = Symbol("not yet");

/**
 * Whether `promise` had already settled when it was handed over (an async function that never
 * waited): racing it against a resolved promise, its own reaction runs first only then.
 */
async function settledAtOnce(promise: Promise<unknown>): Promise<boolean> {
  try {
    return (await Promise.race([promise, Promise.resolve(NOT_YET)])) !== NOT_YET;
  } catch {
    return true; // rejected already
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
