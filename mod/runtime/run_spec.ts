/**
 * The runner seam (docs/grants.md#what-an-allowed-built-in-call-gets). A RunSpec is what a runtime
 * is allowed to do for one call: the tool, its typed arguments, exactly the mounts and egress the
 * decision's grant gives. It can be built only here, from a Decision, which only mod/policy can
 * build.
 */
import type { Decision, ToolArgs } from "../policy/mod.ts";

/** A path mounted into the sandbox at the same path. */
export interface Mount {
  readonly path: string;
  readonly writable: boolean;
}

const brand: unique symbol = Symbol("RunSpec");

/** What one built-in call may do. Built only by `runSpecFor`. */
export class RunSpec {
  readonly [brand] = true;

  private constructor(
    readonly tool: string,
    readonly args: ToolArgs,
    readonly mounts: readonly Mount[],
    readonly egress: readonly string[] | null,
  ) {}

  /** @internal Used by runSpecFor only. */
  static fromDecision(decision: Decision): RunSpec {
    return new RunSpec(decision.tool, decision.args, mountsFor(decision), egressFor(decision));
  }
}

/** The spec for an allowed built-in call (docs/grants.md#what-an-allowed-built-in-call-gets). */
export function runSpecFor(decision: Decision): RunSpec {
  return RunSpec.fromDecision(decision);
}

function mountsFor(decision: Decision): Mount[] {
  switch (decision.tool) {
    case "read_file":
      return decision.matchedPath === null ? [] : [{ path: decision.matchedPath, writable: false }];
    case "write_file":
      return decision.matchedPath === null ? [] : [{ path: decision.matchedPath, writable: true }];
    case "shell":
      return decision.grantPaths.map((path) => ({ path, writable: true }));
    default:
      return [];
  }
}

function egressFor(decision: Decision): string[] | null {
  return decision.tool === "http_fetch" ? [...decision.hosts] : null;
}

/** What a runtime returns for a call that ran. */
export interface RunOutput {
  content: string;
  truncated: boolean;
}

/** A runtime's failure: one of a fixed set of sentences written in gurt, never tool output. */
export class RunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunError";
  }
}

/** Runs built-in tools. */
export interface Runtime {
  run(spec: RunSpec): Promise<RunOutput>;
  /** Releases what the runtime holds, once no call runs any more (the core's close). */
  close?(): Promise<void>;
}

/** The refusal of a box whose sandbox did not work at start. */
export const RUNTIME_UNAVAILABLE =
  "built-in tools cannot run: the sandbox (bubblewrap) did not work when gurt serve started; see runbook.md#runtime-unavailable";

/** The runtime of a box without a working sandbox: every built-in call fails with one sentence. */
export class RefusingRuntime implements Runtime {
  run(_spec: RunSpec): Promise<RunOutput> {
    return Promise.reject(new RunError(RUNTIME_UNAVAILABLE));
  }
}
