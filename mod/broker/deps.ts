/**
 * What the broker's paths share: the home, the audit log, the tools, the approvals, the clock. Each
 * path takes a Pick of BrokerDeps, only what it uses; a task's paths get it in a TaskContext.
 */
import type { AuditAppender } from "../common/mod.ts";
import type { Config } from "../config/mod.ts";
import type { GrantsInvalidReporter } from "../policy/mod.ts";
import type { Runtime } from "../runtime/mod.ts";
import type { ToolRegistry } from "../tools/mod.ts";
import type { SecretReader, TextRedaction, VaultView } from "../vault/mod.ts";
import type { ApprovalContext, Approvals, Verdict } from "./approvals.ts";
import type { TaskHandle } from "./task_handle.ts";

/** Defined where they live (common, the vault, approvals.ts); the broker's files take them from here. */
export type { ApprovalContext, Approvals, AuditAppender, SecretReader, VaultView, Verdict };

/** Everything the broker's request paths use. */
export interface BrokerDeps {
  home: string;
  config: Config;
  audit: AuditAppender;
  registry: ToolRegistry;
  approvals: Approvals;
  runtime: Runtime;
  readSecret: SecretReader;
  /** The vault, for the core's own uses (a task's model key). Tools go through readSecret. */
  vault: VaultView;
  /** Replaces every vault value in text that leaves the core. */
  redact(text: string): string;
  /** The vault's redaction as it is now, for a task's model endpoint to apply to an answer's texts. */
  redaction(): TextRedaction;
  clock(): Date;
  /** Says once per distinct set of problems that the grant files are invalid. */
  grantsReporter: GrantsInvalidReporter;
  /** Aborted when the core closes: work that waits on the outside world stops waiting. */
  shutdown: AbortSignal;
  /** The core's own output (stderr); a task's paths get one held to the task's lines (task_log.ts). */
  log(line: string): void;
  /**
   * The core's output for what is the box's doing, not the task's (the grants report, the audit
   * log's failure): never held to a task's lines, which a task can use up on refusals; a line the
   * same as the one before it is not said again (task_log.ts's boxNotices).
   */
  boxLog(line: string): void;
  /**
   * syncfs of the file system holding a task's home, before a step is written; home_sync.ts's
   * syncFileSystem unless a bench measures the step without it.
   */
  syncHome?: (home: string) => Promise<void>;
}

/** One task's request inside the core: the core's parts it uses, and the task it is for. */
export interface TaskContext<D> {
  deps: D;
  task: TaskHandle;
}
