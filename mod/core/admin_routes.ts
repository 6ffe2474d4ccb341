/**
 * The admin socket (run/owner-broker/admin.sock): the owner's requests. The same handlers serve the
 * owner API. It refuses a task's requests with forbidden.
 */
import { Hono } from "hono";
import {
  type AnswerResult,
  approve,
  auditFailure,
  closeApproval,
  failureRefusal,
  forbidPaths,
  TASK_PATHS,
} from "../broker/mod.ts";
import type { BrokerDeps } from "../broker/mod.ts";
import {
  errorHandler,
  HttpError,
  parseJsonBody,
  parseOptionalJsonBody,
  readBodyBytes,
} from "../common/mod.ts";
import { dormantGrants, loadGrants } from "../policy/mod.ts";
import {
  type AnsweredAnswer,
  type ApprovalsAnswer,
  approveBody,
  type AuditAnswer,
  type AuditRecordsAnswer,
  MAX_RECORDS_PAGE,
  refuseBody,
  startTaskBody,
  stopTaskBody,
  type TaskRecordsAnswer,
  type UsageAnswer,
} from "../admin/mod.ts";
import { type AuditLogIndex, checkpointOf, verifyLines } from "../audit/mod.ts";
import { ApprovalChanges } from "./approval_changes.ts";
import { grantViews } from "./grant_views.ts";
import { followJournal } from "./journal_follow.ts";
import { sinceOf, usageSince } from "./task_usage.ts";
import type { TaskManager } from "./task_manager.ts";
import { redactResponses, type Vault, vaultRoutes } from "../vault/mod.ts";
import type { AppManager } from "./app_manager.ts";
import { appRoutes } from "./app_routes.ts";

const SMALL = 64 * 1024;

/** What the admin app answers from, besides the core's broker dependencies. */
export interface AdminSources {
  tasks: TaskManager;
  /** The admin socket's path, for the log line of a refused request. */
  socket: string;
  /** The live index of the audit log (the Audit page and a task's records). */
  auditIndex: AuditLogIndex;
  /** The vault, whose /api/vault routes are mounted when given. */
  vault?: Vault;
  /** The owner's apps, whose /apps routes are mounted when given. */
  apps?: AppManager;
}

/**
 * What the admin app uses of the core's broker dependencies: the approvals and what answering them
 * writes, the grants, the vault routes' audit, and the core's closing.
 */
export type AdminDeps = Pick<
  BrokerDeps,
  "approvals" | "home" | "audit" | "log" | "registry" | "clock" | "config" | "redact" | "shutdown"
>;

/** The admin app over the core's broker dependencies, its tasks, its audit index and its vault. */
export function adminRoutes(deps: AdminDeps, sources: AdminSources): Hono {
  const { tasks, socket, auditIndex, vault } = sources;
  const changes = new ApprovalChanges(deps.approvals);
  const app = new Hono();
  // The backstop: no answer of the owner's socket carries a vault value.
  app.use("*", redactResponses(deps.redact));

  // An answer with a type in the core is checked against its schema's type in admin/ here, so the
  // two cannot drift apart; the rest are checked by the client's tests against a real core.
  app.get("/approvals", (c) => c.json({ items: deps.approvals.list() } satisfies ApprovalsAnswer));

  app.get("/approvals/changes", async (c) => {
    const after = wholeNumber(c.req.query("after") ?? "0", "after");
    const waitMs = wholeNumber(c.req.query("wait") ?? "0", "wait");
    const version = await changes.after(after, { waitMs, signal: deps.shutdown });
    return c.json({ version });
  });

  app.post("/approvals/:id/approve", async (c) => {
    const id = approvalId(c.req.param("id"));
    const body = parseOptionalJsonBody(await readBodyBytes(c.req.raw, SMALL), approveBody);
    const result = await approve(deps, { id, by: body?.by ?? "gurt approve" });
    return c.json(answered(id, result));
  });

  app.post("/approvals/:id/refuse", async (c) => {
    const id = approvalId(c.req.param("id"));
    const body = parseOptionalJsonBody(await readBodyBytes(c.req.raw, SMALL), refuseBody);
    const result = await closeApproval(deps, {
      id,
      answer: "refused",
      by: body?.by ?? "gurt refuse",
      reason: body?.reason ?? null,
    });
    return c.json(answered(id, result));
  });

  app.get("/grants/check", async (c) => {
    const appTools = deps.registry.appToolNames();
    const load = await loadGrants(`${deps.home}/grants`, { appTools });
    return c.json({
      problems: load.ok ? [] : load.problems,
      dormant: load.ok ? dormantGrants(load.grants.grants, appTools) : [],
    });
  });

  app.get("/grants/tools", (c) => c.json({ tools: deps.registry.catalog() }));

  app.get(
    "/grants",
    async (c) => c.json(await grantViews(deps.home, deps.registry.appToolNames())),
  );

  app.get("/audit", async (c) => {
    const summary = await auditIndex.summary();
    // The table says which approvals with no answer yet are still waiting for the owner.
    const report = { ...summary, waiting: deps.approvals.list().map((one) => one.approval) };
    const { lines, status } = verifyLines(report);
    return c.json(
      {
        ok: status === 0,
        lines,
        records: report.records,
        head: report.head,
        checkpoint: status === 0 ? checkpointOf(report) : null,
        next_seq: report.next_seq,
      } satisfies AuditAnswer,
    );
  });

  // One page of records, read from its place in the log: never the whole log.
  app.get("/audit/records", async (c) => {
    const from = c.req.query("from");
    const limit = wholeNumber(c.req.query("limit") ?? "50", "limit");
    if (limit < 1 || limit > MAX_RECORDS_PAGE) {
      throw new HttpError(400, `limit must be from 1 to ${MAX_RECORDS_PAGE}, not ${limit}`);
    }
    const page = await auditIndex.records({
      from: from === undefined ? undefined : wholeNumber(from, "from"),
      limit,
    });
    return c.json({ records: page.records, next_seq: page.nextSeq } satisfies AuditRecordsAnswer);
  });

  app.get("/tasks", async (c) => c.json({ tasks: await tasks.list() }));

  app.get("/usage", async (c) => {
    const since = sinceOf(c.req.query("since"));
    const usage = await usageSince(deps.home, since);
    return c.json({ since: since?.toISOString() ?? null, ...usage } satisfies UsageAnswer);
  });

  app.post("/tasks", async (c) => {
    const body = parseJsonBody(await readBodyBytes(c.req.raw, 2 * 1024 * 1024), startTaskBody);
    return c.json({ task: await tasks.start(body) });
  });

  app.get("/tasks/:id", async (c) => c.json(await tasks.show(c.req.param("id"))));

  app.get("/tasks/:id/journal", async (c) => {
    const after = wholeNumber(c.req.query("after") ?? "0", "after");
    const waitMs = wholeNumber(c.req.query("wait") ?? "0", "wait");
    return c.json(await followJournal(tasks, { id: c.req.param("id"), after, waitMs }));
  });

  app.get("/tasks/:id/records", async (c) => {
    const id = c.req.param("id");
    if (!/^[a-z0-9]{1,24}$/.test(id)) {
      throw new HttpError(400, `${JSON.stringify(id)} is not a task id`);
    }
    return c.json({ records: await auditIndex.taskRecords(id) } satisfies TaskRecordsAnswer);
  });

  app.post("/tasks/:id/stop", async (c) => {
    const body = parseOptionalJsonBody(await readBodyBytes(c.req.raw, SMALL), stopTaskBody);
    const reason = body?.reason ?? "stopped by the owner";
    return c.json({ task: await tasks.stop(c.req.param("id"), reason) });
  });

  if (sources.apps !== undefined) app.route("/apps", appRoutes(sources.apps));

  if (vault !== undefined) {
    const vaultDeps = {
      config: deps.config,
      audit: deps.audit,
      registry: deps.registry,
      auditFailed: (error: unknown) => deps.log(auditFailure(error)),
    };
    app.route("/api/vault", vaultRoutes(vaultDeps, vault));
  }

  forbidPaths(app, { paths: TASK_PATHS, socket, log: deps.log });
  app.onError(errorHandler({ log: deps.log, refusal: failureRefusal }));
  return app;
}

function wholeNumber(text: string, name: string): number {
  if (!/^(0|[1-9][0-9]{0,8})$/.test(text)) {
    throw new HttpError(400, `${name} must be a whole number, not ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function approvalId(text: string): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) {
    throw new HttpError(400, `${JSON.stringify(text)} is not an approval id (a whole number)`);
  }
  return Number(text);
}

function answered(id: number, result: AnswerResult): AnsweredAnswer {
  if (result.kind === "missing") {
    throw new HttpError(
      404,
      `${id}: no such approval (already answered or expired, or dropped when gurt serve stopped: approvals wait only while it runs)`,
      "no_such_approval",
    );
  }
  if (result.kind === "unrecorded") {
    throw new HttpError(
      503,
      `${id}: the answer could not be written to the audit log, so the call is denied; see runbook.md#audit-unavailable`,
      "audit_unavailable",
    );
  }
  return { outcome: result.outcome };
}
