/**
 * The table of pending approvals, in memory, which the core keeps on disk too as it changes, for a
 * restart to open them again (approval_restore.ts; docs/grants.md#approvals). Every kind shares it: an
 * ask grant, a call over budget, a worker's /ask. An entry's id is its Decision record's seq.
 * Whoever takes an entry out of the table answers it: approve, refuse, expiry, the task ending, or
 * its requester going away. Everyone else finds it gone. JavaScript runs one handler at a time, so
 * `take` is the whole lock. Below the table: answering an entry (approve, refuse, expire, close a
 * task's, withdraw all), which writes the Approval record and only then tells the waiting call.
 */
import type { AuditAppender } from "../common/mod.ts";
import {
  type Ask,
  type Decision,
  type DenyReason,
  loadGrants,
  readSessionState,
  redecide,
  type SessionState,
  StateUnreadableError,
} from "../policy/mod.ts";
import type { ToolRegistry } from "../tools/mod.ts";
import { approvalEvent, type RecordedOutcome } from "./records.ts";
import { auditFailure } from "./result_record.ts";
import type { InFlight, TaskHandle } from "./task_handle.ts";
import type { AskBody } from "./task_schemas.ts";

/** The answer to a pending approval, from whoever took it out of the table. */
export type Verdict =
  | { kind: "approved"; decision: Decision | null }
  | {
    kind: "denied";
    reason: DenyReason;
    /** The owner's reason for a refusal (or `task ended`), when one was given. */
    note?: string | null;
  }
  | { kind: "withdrawn" };

/**
 * What a restart needs to open an approval again (approval_restore.ts): the call as the task sent
 * it, or the /ask's body. Null for one that cannot come back (a model request over budget, whose
 * request ends with the core), or whose input holds a vault value, which is kept nowhere.
 */
export type KeptRequest =
  | {
    kind: "call";
    call: { tool: string; key: string; input: unknown; raw: string; inputSha256: string };
  }
  | { kind: "ask"; ask: Omit<AskBody, "waitMs"> };

/** What the answerer of an approval needs. */
export interface ApprovalContext {
  task: TaskHandle;
  /** The policy's Ask, for a call; null for a worker's /ask. */
  ask: Ask | null;
  flight: InFlight<unknown>;
  costCents: number;
  /** What opens it again after a restart; null if nothing can. */
  kept: KeptRequest | null;
}

/** The approvals table of the core. */
export type Approvals = ApprovalTable<ApprovalContext, Verdict>;

/** What the owner is shown for one pending approval (docs/broker-api.md#the-admin-socket). */
export interface PendingApproval {
  approval: number;
  task: string;
  key: string;
  kind: "grant" | "budget" | "ask";
  tool: string;
  arguments: string;
  grant: string | null;
  taint: string;
  costCents: number | null;
  created: string;
  expires: string;
}

/** One entry: what is shown, what the answerer needs, and how its waiters learn the verdict. */
export interface PendingEntry<C, V> {
  readonly shown: PendingApproval;
  /** What the answerer needs to decide again (the policy Ask, the call). */
  readonly context: C;
  /** Resolves once, with the verdict, when the entry is answered. */
  readonly verdict: Promise<V>;
  /**
   * Resolves once the core has it on disk, for a restart to open again (or at once where nothing
   * keeps the table): a request answers pending only then.
   */
  stored: Promise<void>;
  /** How many requests are waiting on it right now. */
  waiters: number;
  /** Called by the one who took the entry. */
  settle(verdict: V): void;
}

/** The pending approvals of the whole core. */
export class ApprovalTable<C, V> {
  readonly #entries = new Map<number, PendingEntry<C, V>>();
  readonly #listeners = new Set<(changed: PendingApproval) => void>();
  /** Resolves once the table as it is now is on disk; the core sets it (open_approvals.ts). */
  stored: () => Promise<void> = () => Promise.resolve();

  /** Adds an entry for `shown`; the id is shown.approval. */
  add(shown: PendingApproval, context: C): PendingEntry<C, V> {
    if (this.#entries.has(shown.approval)) {
      throw new Error(`approval ${shown.approval} is already pending`);
    }
    let settle!: (verdict: V) => void;
    const verdict = new Promise<V>((resolve) => (settle = resolve));
    const entry: PendingEntry<C, V> = {
      shown,
      context,
      verdict,
      stored: Promise.resolve(),
      waiters: 0,
      settle,
    };
    this.#entries.set(shown.approval, entry);
    this.#changed(shown);
    entry.stored = this.stored().catch(() => {}); // a write that fails is logged by its writer
    return entry;
  }

  /** Takes the entry out; the caller must answer it. Undefined if someone else already did. */
  take(id: number): PendingEntry<C, V> | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    this.#entries.delete(id);
    this.#changed(entry.shown);
    return entry;
  }

  /** The entry with this id, still pending. */
  get(id: number): PendingEntry<C, V> | undefined {
    return this.#entries.get(id);
  }

  /** Every pending entry, oldest first. */
  entries(): PendingEntry<C, V>[] {
    return [...this.#entries.values()].sort((a, b) => a.shown.approval - b.shown.approval);
  }

  /** Every pending approval, oldest first. */
  list(): PendingApproval[] {
    return [...this.#entries.values()].map((entry) => entry.shown)
      .sort((a, b) => a.approval - b.approval);
  }

  /** The ids of a task's pending approvals. */
  ofTask(task: string): number[] {
    return this.list().filter((shown) => shown.task === task).map((shown) => shown.approval);
  }

  /** The ids whose expiry is at or before `now`. */
  expiredAt(now: Date): number[] {
    return this.list().filter((shown) => Date.parse(shown.expires) <= now.getTime())
      .map((shown) => shown.approval);
  }

  /**
   * Calls `listener` with the entry whenever one is added or taken: for live views, and for the
   * task manager, which marks the entry's task running or waiting.
   */
  onChange(listener: (changed: PendingApproval) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(shown: PendingApproval): void {
    for (const listener of this.#listeners) listener(shown);
  }
}

// ---------------------------------------------------------------------------------------------
// Answering a pending approval (docs/grants.md#approvals). Whoever takes the entry out of the
// table answers it, writes the Approval record, and only then tells the waiting call. Approve
// decides again with the grants and the taint as they are now.
// ---------------------------------------------------------------------------------------------

/** What an owner's answer came to; `missing` is no_such_approval. */
export type AnswerResult =
  | { kind: "answered"; outcome: RecordedOutcome }
  | { kind: "missing" }
  | { kind: "unrecorded" };

/** What answering an approval uses: the table, and what an Approval record is written with. */
export interface AnswerDeps {
  approvals: Approvals;
  home: string;
  audit: AuditAppender;
  log(line: string): void;
}

/** What approving uses besides: the grants as they are now, and the clock they are checked at. */
export interface ApproveDeps extends AnswerDeps {
  registry: Pick<ToolRegistry, "appToolNames">;
  clock(): Date;
}

const UNKNOWN_STATE: SessionState = { taint: "secret", untrusted: true };

/**
 * Waits until the kept table no longer lists an approval just taken, before its Approval record is
 * written: a crash between the two then leaves it unanswered, never opened again after its answer.
 */
async function offDisk(deps: AnswerDeps): Promise<void> {
  await deps.approvals.stored().catch(() => {});
}

/** Approves a pending approval: re-decides, records, and lets the call run if still allowed. */
export async function approve(
  deps: ApproveDeps,
  answer: { id: number; by: string },
): Promise<AnswerResult> {
  const { id, by } = answer;
  const entry = deps.approvals.take(id);
  if (entry === undefined) return { kind: "missing" };
  await offDisk(deps);
  const { task, ask } = entry.context;
  const grants = ask === null ? null : await loadGrants(`${deps.home}/grants`, {
    appTools: deps.registry.appToolNames(),
  });
  let verdict: Verdict = { kind: "denied", reason: "audit_unavailable" };
  let outcome: RecordedOutcome = { outcome: "denied", reason: "audit_unavailable" };
  try {
    await task.ledger.exclusive(async () => {
      let state = UNKNOWN_STATE;
      let grant: string | null = null;
      let grantSha256: string | null = null;
      let next: Verdict;
      try {
        state = await readSessionState(deps.home, task.id);
        if (ask === null) {
          next = { kind: "approved", decision: null };
        } else if (grants === null || !grants.ok) {
          next = { kind: "denied", reason: "grants_invalid" };
        } else {
          const again = redecide(ask, { grants: grants.grants, state, now: deps.clock() });
          if (again.kind === "allowed") {
            next = { kind: "approved", decision: again.decision };
            grant = again.decision.grant;
            grantSha256 = again.decision.grantSha256;
          } else {
            next = { kind: "denied", reason: again.denial.reason };
            grant = again.denial.grant;
            grantSha256 = again.denial.grant_sha256;
          }
        }
      } catch (error) {
        if (!(error instanceof StateUnreadableError)) throw error;
        deps.log(error.message);
        next = { kind: "denied", reason: "state_unreadable" };
      }
      const recorded: RecordedOutcome = next.kind === "approved"
        ? { outcome: "allowed" }
        : { outcome: "denied", reason: (next as { reason: DenyReason }).reason };
      await deps.audit.append(approvalEvent(
        { task: task.id, key: entry.shown.key, tool: entry.shown.tool, decision: id },
        { answer: "approved", by, reason: null, outcome: recorded, grant, grantSha256, state },
      ));
      verdict = next;
      outcome = recorded;
    });
  } catch (error) {
    deps.log(auditFailure(error));
    entry.settle({ kind: "denied", reason: "audit_unavailable" });
    return { kind: "unrecorded" };
  }
  entry.settle(verdict);
  return { kind: "answered", outcome };
}

/** Closes a pending approval as denied: refused by the owner, expired, or its task ended. */
export async function closeApproval(
  deps: AnswerDeps,
  how: { id: number; answer: "refused" | "expired"; by: string | null; reason: string | null },
): Promise<AnswerResult> {
  const { id } = how;
  const entry = deps.approvals.take(id);
  if (entry === undefined) return { kind: "missing" };
  await offDisk(deps);
  const { task } = entry.context;
  const reason: DenyReason = how.answer === "refused" ? "approval_refused" : "approval_expired";
  const outcome: RecordedOutcome = { outcome: "denied", reason };
  try {
    await task.ledger.exclusive(async () => {
      let state = UNKNOWN_STATE;
      try {
        state = await readSessionState(deps.home, task.id);
      } catch (error) {
        if (!(error instanceof StateUnreadableError)) throw error;
      }
      await deps.audit.append(approvalEvent(
        { task: task.id, key: entry.shown.key, tool: entry.shown.tool, decision: id },
        {
          answer: how.answer,
          by: how.by,
          reason: how.reason,
          outcome,
          grant: null,
          grantSha256: null,
          state,
        },
      ));
    });
  } catch (error) {
    // The log lacks the answer, so no answer is kept for the key either: audit_unavailable is
    // the box's state, not the call's, and the call may be asked again once the log works.
    deps.log(auditFailure(error));
    entry.settle({ kind: "denied", reason: "audit_unavailable" });
    return { kind: "unrecorded" };
  }
  entry.settle({ kind: "denied", reason, note: how.reason });
  return { kind: "answered", outcome };
}

/** Expires every approval whose time has come. */
export async function expireDue(deps: AnswerDeps & { clock(): Date }): Promise<void> {
  for (const id of deps.approvals.expiredAt(deps.clock())) {
    await closeApproval(deps, { id, answer: "expired", by: null, reason: null });
  }
}

/** Closes every pending approval of a task that ended, as denied, answered by `task ended`. */
export async function closeTaskApprovals(deps: AnswerDeps, task: string): Promise<void> {
  for (const id of deps.approvals.ofTask(task)) {
    await closeApproval(deps, { id, answer: "refused", by: "task ended", reason: "task ended" });
  }
}

/**
 * Withdraws every pending approval when the core closes: nothing is written (the core has kept them
 * on disk, and the next start opens them again), and each waiting request answers pending, so its
 * worker asks again after the restart, and waits on the same approval.
 */
export function withdrawAll(approvals: Approvals): void {
  for (const shown of approvals.list()) {
    const entry = approvals.take(shown.approval);
    entry?.settle({ kind: "withdrawn" });
  }
}
