/**
 * The run of an allowed call's tool (docs/broker-api.md#post-call, step 4): an app tool inside the
 * core with only its declared secrets, or a built-in tool through the runtime, which mounts only
 * the matched grant path. What the run gives is redacted before anything else sees it. The
 * transaction around it is call_transaction.ts.
 */
import { redactValue } from "../common/mod.ts";
import type { Decision } from "../policy/mod.ts";
import { RunError, runSpecFor } from "../runtime/mod.ts";
import type { AppTool } from "../tools/mod.ts";
import type { BrokerDeps } from "./deps.ts";
import type { TaskHandle } from "./task_handle.ts";

/**
 * What a run gave: for a result, the output the task gets and its content as the Result record
 * hashes it; for a failure, the message. Both redacted.
 */
export type RunOutcome =
  | { status: "result"; output: unknown; content: string; truncated: boolean }
  | { status: "failed"; content: string; truncated: false };

/** A tool's run under way: the tool's own promise, and what the run gave once it ends. */
export interface ToolRun {
  /** Settles when the tool does: the app tool's promise, or the runtime's. */
  started: Promise<unknown>;
  outcome: Promise<RunOutcome>;
}

/** What a run uses: the runtime for a built-in tool, the vault's secrets for an app tool. */
export type RunDeps = Pick<BrokerDeps, "runtime" | "readSecret" | "home" | "redact">;

/** What a run needs to know of the call it runs. */
export interface RunCall {
  task: TaskHandle;
  key: string;
  /** The app tool, or undefined for a built-in tool. */
  app: AppTool<unknown> | undefined;
  /** The input as the app tool's schema parsed it. */
  input: unknown;
  /** The Decision it runs under: a built-in tool's run spec comes from it. */
  decision: Decision;
  /** Why the task's app tool is not offered now (its app turned off or removed), or null. */
  notOffered: string | null;
}

/** Starts the run of an allowed call's tool. */
export function runAllowedCall(deps: RunDeps, call: RunCall): ToolRun {
  if (call.notOffered !== null) {
    const content = deps.redact(call.notOffered);
    const outcome: RunOutcome = { status: "failed", content, truncated: false };
    return { started: Promise.resolve(), outcome: Promise.resolve(outcome) };
  }
  if (call.app === undefined) {
    const started = deps.runtime.run(runSpecFor(call.decision));
    const outcome = started.then((ran): RunOutcome => {
      const content = deps.redact(ran.content);
      const truncated = ran.truncated;
      return { status: "result", output: { content, truncated }, content, truncated };
    });
    return { started, outcome: outcome.then(undefined, (error) => failed(deps, error)) };
  }
  const started = startApp(deps, { ...call, app: call.app });
  const outcome = started.then((value): RunOutcome => {
    const output = redactValue(value, deps.redact);
    return { status: "result", output, content: JSON.stringify(output ?? null), truncated: false };
  });
  return { started, outcome: outcome.then(undefined, (error) => failed(deps, error)) };
}

/** Runs an app tool with only its declared secrets; a throw becomes a rejection. */
function startApp(deps: RunDeps, call: RunCall & { app: AppTool<unknown> }): Promise<unknown> {
  const { app, task } = call;
  const appName = app.name.slice(0, app.name.indexOf("."));
  try {
    return app.run({
      task: task.id,
      key: `${task.id}.${call.key}`,
      home: deps.home,
      secret: (name) => deps.readSecret(appName, app.secrets, name),
    }, call.input);
  } catch (error) {
    return Promise.reject(error);
  }
}

function failed(deps: RunDeps, error: unknown): RunOutcome {
  // A RunError is a sentence written in gurt, but an app's may quote what its server said.
  const message = error instanceof RunError
    ? deps.redact(error.message)
    : `the tool failed: ${deps.redact(error instanceof Error ? error.message : String(error))}`;
  return { status: "failed", content: message, truncated: false };
}

const NOT_YET = Symbol("not yet");

/**
 * Whether `promise` had already settled when it was handed over (an async function that never
 * waited): racing it against a resolved promise, its own reaction runs first only then.
 */
export async function settledAtOnce(promise: Promise<unknown>): Promise<boolean> {
  try {
    return (await Promise.race([promise, Promise.resolve(NOT_YET)])) !== NOT_YET;
  } catch {
    return true; // rejected already
  }
}
