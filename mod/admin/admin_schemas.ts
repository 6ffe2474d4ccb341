/**
 * The admin socket's messages, each written once: the bodies of its requests, which the core
 * validates, and its answers, which the one admin client validates before any owner command or the
 * portal reads them. An answer schema keeps the fields its readers use and drops any others.
 */
import { z } from "zod";
import { egressHost } from "../config/mod.ts";
import { AGENT_NAMES } from "../agents/mod.ts";

// ---- Requests ----

export const refuseBody = z.strictObject({
  reason: z.string().max(2000).optional(),
  /** Who refused, for the Approval record (`gurt refuse` when absent). */
  by: z.string().min(1).max(200).optional(),
});

export const approveBody = z.strictObject({ by: z.string().min(1).max(200).optional() });

export const startTaskBody = z.strictObject({
  prompt: z.string().max(1_000_000).default(""),
  worker: z.discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("test"), scriptText: z.string().max(1_000_000) }),
    z.strictObject({ kind: z.literal("cmd"), command: z.array(z.string()).min(1) }),
    z.strictObject({ kind: z.literal("none") }),
    z.strictObject({
      kind: z.literal("loop"),
      model: z.string().min(1).max(200).nullable().default(null),
    }),
    z.strictObject({
      kind: z.literal("agent"),
      agent: z.enum(AGENT_NAMES),
      model: z.string().min(1).max(200).nullable().default(null),
    }),
  ]),
  tools: z.array(z.string().min(1).max(200)).max(200).default(["example.echo"]),
  budgetCents: z.number().int().min(0).nullable().default(null),
  /** Hosts the task's egress proxy allows, beside gurt.toml's [egress] hosts. */
  hosts: z.array(egressHost).max(200).default([]),
  /** The owner's folders the task works in (`--workdir PATH[:ro]`), decided by task.workdir grants. */
  workdirs: z.array(z.strictObject({
    path: z.string().min(1).max(4096).refine(
      (path) =>
        path.startsWith("/") && path !== "/" && !path.includes("\0") &&
        !path.slice(1).split("/").some((part) => ["", ".", ".."].includes(part)),
      "must be an absolute path with no empty, . or .. component, and not /",
    ),
    readOnly: z.boolean().default(false),
  })).max(8).default([]),
  /** The owner's credential rules the task is given by id (`--credentials`, docs/credentials.md). */
  credentials: z.array(z.string().regex(/^[a-z0-9-]{1,64}$/, "is not a credential rule id"))
    .max(16).default([]),
});
export type StartTask = z.infer<typeof startTaskBody>;
/** A start request as the owner sends it (the fields with defaults may be left out). */
export type StartTaskInput = z.input<typeof startTaskBody>;

export const stopTaskBody = z.strictObject({ reason: z.string().max(2000).optional() });

// ---- Answers ----

/** Every refusal: `{"error": "…"}`, with a code for the ones a program tells apart. */
export const errorAnswer = z.object({ error: z.string(), code: z.string().optional() });

const seq = z.number().int().nonnegative();

/** One pending approval, as `gurt approvals` and the Approvals page show it. */
export const pendingApproval = z.object({
  approval: seq,
  task: z.string(),
  key: z.string(),
  kind: z.enum(["grant", "budget", "ask"]),
  tool: z.string(),
  arguments: z.string(),
  grant: z.string().nullable(),
  taint: z.string(),
  costCents: z.number().int().nullable(),
  created: z.string(),
  expires: z.string(),
});
export type PendingApprovalView = z.infer<typeof pendingApproval>;

/** `GET /approvals`. */
export const approvalsAnswer = z.object({ items: z.array(pendingApproval) });
export type ApprovalsAnswer = z.infer<typeof approvalsAnswer>;

/** What an approval came to once answered. */
export const answeredOutcome = z.discriminatedUnion("outcome", [
  z.object({ outcome: z.literal("allowed") }),
  z.object({ outcome: z.literal("ask") }),
  z.object({ outcome: z.literal("denied"), reason: z.string() }),
]);

/** `POST /approvals/:id/approve` and `/refuse`. */
export const answeredAnswer = z.object({ outcome: answeredOutcome });
export type AnsweredAnswer = z.infer<typeof answeredAnswer>;

/** `GET /grants/check`: the grant set's problems, none when it is valid. */
export const grantsCheckAnswer = z.object({
  problems: z.array(
    z.object({ file: z.string(), line: z.number().int().nullable(), problem: z.string() }),
  ),
  /** Grants of tools of apps that are not installed: kept, matching nothing (not problems). */
  dormant: z.array(z.object({ file: z.string(), tool: z.string() })).default([]),
});

/** Every tool of the box, for `gurt tools` (GET /grants/tools: the tools a grant may name). */
export const toolsAnswer = z.object({
  tools: z.array(z.object({
    name: z.string(),
    description: z.string(),
    readOnly: z.boolean(),
    costCents: z.number().int().nonnegative().nullable(),
    app: z.string().nullable(),
    input: z.unknown(),
  })),
});

const TASK_STATES = ["running", "waiting", "done", "failed", "stopped"] as const;

const tokens = z.number().int().nonnegative();

/**
 * What one model (at one provider, null for the built-in service) cost a task, or every task:
 * its answers, tokens of each kind, the exact cost in billionths of a cent, how many answers had
 * no price (charged at the highest listed rate) and how many were cut short at their bound.
 */
export const spendRowView = z.object({
  model: z.string(),
  provider: z.string().nullable(),
  requests: tokens,
  input: tokens,
  output: tokens,
  cacheWrite: tokens,
  cacheRead: tokens,
  nanocents: tokens,
  unpriced: tokens,
  bounded: tokens,
});
export type SpendRowView = z.infer<typeof spendRowView>;

/** `GET /usage?since=DATE`: the spend by model of every task's answers since then (all if none). */
export const usageAnswer = z.object({
  since: z.string().nullable(),
  tasks: tokens,
  models: z.array(spendRowView),
});
export type UsageAnswer = z.infer<typeof usageAnswer>;

/** A task as the owner sees it: task.json without its user and pid, with what it has spent. */
export const taskView = z.object({
  id: z.string(),
  prompt: z.string(),
  worker: z.looseObject({ kind: z.string() }),
  tools: z.array(z.string()),
  budgetCents: z.number().int().nullable(),
  state: z.enum(TASK_STATES),
  created: z.string(),
  ended: z.string().nullable(),
  endReason: z.string().nullable(),
  spentCents: z.number(),
  /** Its spend by model, from its journal's model.usage lines, most expensive first. */
  spend: z.array(spendRowView).default([]),
  /** The task's own egress host list (none for a task made before it had one). */
  hosts: z.array(z.string()).default([]),
  /** The owner's folders mounted in the task (`--workdir`), with their grants' modes. */
  workdirs: z.array(z.object({ path: z.string(), readOnly: z.boolean(), mode: z.string() }))
    .default([]),
  /** The credential rules the task was given, by id. */
  credentials: z.array(z.string()).default([]),
});
export type TaskView = z.infer<typeof taskView>;

/** A task in the list, with the ids of its pending approvals. */
export const listedTask = taskView.extend({ pending: z.array(seq) });
export type ListedTask = z.infer<typeof listedTask>;

/** `GET /tasks`: every task, newest first. */
export const tasksAnswer = z.object({ tasks: z.array(listedTask) });

/** A task as task.json holds it, as `POST /tasks` and `POST /tasks/:id/stop` answer it. */
export const taskRecordView = taskView.omit({ spentCents: true, spend: true });

/** `POST /tasks` and `POST /tasks/:id/stop`. */
export const taskAnswer = z.object({ task: taskRecordView });

/**
 * A line of a task's journal. The broker writes and checks each line; the owner's readers show the
 * kinds they know in words and any other as its JSON, so every field is kept.
 */
export const journalLineView = z.looseObject({ type: z.string(), time: z.string() });
export type JournalLineView = z.infer<typeof journalLineView>;

/** `GET /tasks/:id`: the task, its pending approvals and its whole journal. */
export const taskShowAnswer = z.object({
  task: taskView,
  pending: z.array(seq),
  journal: z.array(journalLineView),
});
export type TaskShowAnswer = z.infer<typeof taskShowAnswer>;

/** `GET /tasks/:id/journal?after=N&wait=MS`: the lines after the first N. */
export const journalPageAnswer = z.object({
  lines: z.array(journalLineView),
  next: z.number().int().nonnegative(),
  state: z.string(),
  ended: z.boolean(),
});
export type JournalPageAnswer = z.infer<typeof journalPageAnswer>;

/** One vault key: its name, when it was set and the apps it is off for; never its value. */
export const vaultKeyView = z.object({
  name: z.string(),
  set: z.string(),
  denied_apps: z.array(z.string()),
});
export type VaultKeyView = z.infer<typeof vaultKeyView>;

/** `GET /api/vault`. */
export const vaultKeysAnswer = z.object({ keys: z.array(vaultKeyView) });

/** `PUT` and `DELETE /api/vault/:name`, `POST /api/vault/:name/deny|allow`. */
export const vaultChangedAnswer = z.object({ ok: z.literal(true) });

/** `GET /approvals/changes?after=N&wait=MS`: the pending list's version, once it is not N. */
export const approvalChangesAnswer = z.object({ version: z.number().int().nonnegative() });

/** One grant file as the Grants page shows it: its fields, or its problems. */
export const grantView = z.object({
  file: z.string(),
  id: z.string(),
  ok: z.boolean(),
  tool: z.string().nullable(),
  mode: z.string().nullable(),
  label: z.string().nullable(),
  expires: z.string().nullable(),
  constraints: z.array(z.string()),
  problems: z.array(z.string()),
});
export type GrantView = z.infer<typeof grantView>;

/** `GET /grants`: every grant file, each read on its own, and the problems of the set. */
export const grantsAnswer = z.object({ grants: z.array(grantView), problems: z.array(z.string()) });
export type GrantsAnswer = z.infer<typeof grantsAnswer>;

/** `GET /audit`: the whole log's verification as `gurt audit verify` prints it. */
export const auditAnswer = z.object({
  ok: z.boolean(),
  lines: z.array(z.string()),
  records: z.number().int().nonnegative(),
  head: z.string().nullable(),
  checkpoint: z.string().nullable(),
  /** The seq the next record will have: where the newest page ends. */
  next_seq: z.number().int().nonnegative(),
});
export type AuditAnswer = z.infer<typeof auditAnswer>;

/** An audit record (the log's own format is checked by the core as it reads it). */
export const auditRecordView = z.object({
  seq,
  time: z.string(),
  prev: z.string(),
  event: z.looseObject({ type: z.string() }),
});
export type AuditRecordView = z.infer<typeof auditRecordView>;

/** The most records one page of `GET /audit/records` holds. */
export const MAX_RECORDS_PAGE = 200;

/** `GET /audit/records?from=N&limit=M`: up to M records from seq N on. */
export const auditRecordsAnswer = z.object({
  records: z.array(auditRecordView),
  next_seq: z.number().int().nonnegative(),
});
export type AuditRecordsAnswer = z.infer<typeof auditRecordsAnswer>;

/** `GET /tasks/:id/records`: the newest records (up to 500) whose event names the task. */
export const taskRecordsAnswer = z.object({ records: z.array(auditRecordView) });
export type TaskRecordsAnswer = z.infer<typeof taskRecordsAnswer>;
