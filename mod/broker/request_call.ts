/**
 * A request a task makes by another door than POST /call, decided as a call: a credentialed HTTPS
 * request on its egress (mod/credentials) is a call of `http.request` with `{method, host, path}`.
 * Its transaction is a call's (call_transaction.ts): the Decision record before anything goes, an
 * approval where the grant says ask, the run, the taint, the Result record. What differs: its key
 * is fresh (two identical requests are two calls, each decided on its own; none joins another),
 * its tool is given rather than looked up (a task cannot make the call through /call), and it
 * waits for the owner as long as its connection lasts, never answering pending.
 */
import { inputDigest } from "./canonical_json.ts";
import type { KeyedCall, ToolFacts } from "./call_decision.ts";
import { runGivenCall } from "./call_path.ts";
import type { CallDeps } from "./call_transaction.ts";
import type { TaskContext } from "./deps.ts";
import type { CallAnswer } from "./journal.ts";
import type { AppTool } from "../tools/mod.ts";
import { waitOn } from "./waiting.ts";

/** What a request call comes to: the call's answer, or withdrawn (its connection went away). */
export type RequestEnd = { kind: "answer"; answer: CallAnswer } | { kind: "withdrawn" };

/** One request to decide and, if allowed, run. */
export interface RequestCall {
  /** The tool it is a call of (`http.request`). */
  tool: string;
  /** The call's arguments, as the Decision record keeps them. */
  input: Record<string, unknown>;
  /** Shown to the owner after the arguments, in an approval. */
  preview?: string;
  /** Runs the request once allowed; what it resolves to is the Result record's output. */
  run(): Promise<unknown>;
  /** Aborts when the requester's connection drops. */
  signal: AbortSignal;
}

/** Decides, records, asks, runs and records `request` for the task. */
export async function requestCall(
  ctx: TaskContext<CallDeps>,
  request: RequestCall,
): Promise<RequestEnd> {
  const raw = JSON.stringify(request.input);
  const body: KeyedCall = {
    tool: request.tool,
    key: `${request.tool}-${crypto.randomUUID()}`,
    input: request.input,
    raw,
    inputSha256: inputDigest(request.input),
  };
  const app: AppTool<unknown> = {
    name: request.tool,
    description: "a request of the task's, decided as a call",
    input: { safeParse: (value) => ({ success: true, data: value }) },
    secrets: [],
    run: () => request.run(),
  };
  const tool: ToolFacts = {
    app,
    input: request.input,
    cost: 0,
    valid: true,
    listed: true,
    notOffered: null,
  };
  const flight = runGivenCall(ctx, { body, given: { tool, preview: request.preview } });
  for (;;) {
    const end = await waitOn(ctx.deps, { flight, signal: request.signal });
    if (end.kind === "pending") continue; // held while its connection lasts
    if (end.kind === "answer") return { kind: "answer", answer: end.answer as CallAnswer };
    if (end.kind === "refused") {
      return { kind: "answer", answer: { ok: false, error: end.error.message } };
    }
    return { kind: "withdrawn" };
  }
}
