/**
 * The one client of the admin socket, for the owner commands and the portal: HTTP + JSON on
 * run/owner-broker/admin.sock, each answer checked against its schema in admin_schemas.ts before
 * anyone reads it. A refusal is a value (`ok: false` with the core's sentence); a core that cannot
 * be reached, or an answer that is not what this gurt expects, is thrown.
 */
import type { z } from "zod";
import { requestJson, requestRaw, SocketUnreachableError } from "../net/mod.ts";
import {
  answeredAnswer,
  approvalChangesAnswer,
  approvalsAnswer,
  auditAnswer,
  auditRecordsAnswer,
  errorAnswer,
  grantsAnswer,
  grantsCheckAnswer,
  journalPageAnswer,
  type StartTaskInput,
  taskAnswer,
  taskRecordsAnswer,
  tasksAnswer,
  taskShowAnswer,
  toolsAnswer,
  usageAnswer,
  vaultChangedAnswer,
  vaultKeysAnswer,
} from "./admin_schemas.ts";
import {
  type AddAppInput,
  appAnswer,
  appRemovedAnswer,
  appsAnswer,
  appsCheckAnswer,
} from "./app_schemas.ts";

/** The core did not answer: it is not running on this home, or the socket is not ours to open. */
export class CoreUnreachableError extends Error {
  constructor(socket: string) {
    super(
      `cannot reach gurt serve at ${socket}: is it running on this box home? see runbook.md#serve-unreachable`,
    );
    this.name = "CoreUnreachableError";
  }
}

/** The core answered, but not in the shape this gurt's schema for that answer describes. */
export class AdminAnswerError extends Error {
  constructor(request: { method: string; path: string }, problem: string) {
    super(
      `the core's answer to ${request.method} ${request.path} is not what this gurt expects ` +
        `(${problem}); is gurt serve another version of gurt? see runbook.md#admin-answer-invalid`,
    );
    this.name = "AdminAnswerError";
  }
}

/** The core's answer: the value its schema describes, or its refusal. */
export type AdminResult<T> =
  | { ok: true; value: T }
  | { ok: false; status: number; error: string; code: string | null };

/** One request to the admin socket. */
export interface AdminRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
  signal?: AbortSignal;
}

/** An approval id as the owner typed it; the core refuses one that is not a whole number. */
type ApprovalId = number | string;

/** The admin socket of one box home. */
export class AdminClient {
  constructor(readonly socket: string) {}

  /** Every pending approval, oldest first. */
  approvals(): Promise<AdminResult<z.infer<typeof approvalsAnswer>>> {
    return this.ask({ method: "GET", path: "/approvals" }, approvalsAnswer);
  }

  /**
   * The pending list's version once it is not `after` (at once if it is not already), or after
   * `waitMs` with no change: a long poll for live views.
   */
  approvalChanges(
    after: number,
    options: { waitMs: number; signal?: AbortSignal },
  ): Promise<AdminResult<z.infer<typeof approvalChangesAnswer>>> {
    const path = `/approvals/changes?after=${after}&wait=${options.waitMs}`;
    return this.ask({ method: "GET", path, signal: options.signal }, approvalChangesAnswer);
  }

  /** Approves approval `id`; `by` names who answered in the Approval record. */
  approve(
    id: ApprovalId,
    options: { by?: string } = {},
  ): Promise<AdminResult<z.infer<typeof answeredAnswer>>> {
    const body = options.by === undefined ? undefined : { by: options.by };
    return this.ask(
      { method: "POST", path: `/approvals/${pathPart(id)}/approve`, body },
      answeredAnswer,
    );
  }

  /** Refuses approval `id`, with the owner's reason if any; `by` names who refused. */
  refuse(
    id: ApprovalId,
    options: { reason?: string; by?: string } = {},
  ): Promise<AdminResult<z.infer<typeof answeredAnswer>>> {
    const body = options.reason === undefined && options.by === undefined ? undefined : {
      ...(options.reason === undefined ? {} : { reason: options.reason }),
      ...(options.by === undefined ? {} : { by: options.by }),
    };
    return this.ask(
      { method: "POST", path: `/approvals/${pathPart(id)}/refuse`, body },
      answeredAnswer,
    );
  }

  /** The grant files' problems, as a decision would find them. */
  grantsCheck(): Promise<AdminResult<z.infer<typeof grantsCheckAnswer>>> {
    return this.ask({ method: "GET", path: "/grants/check" }, grantsCheckAnswer);
  }

  /** Every tool of the box: the built-ins, gurt's own and the installed apps'. */
  tools(): Promise<AdminResult<z.infer<typeof toolsAnswer>>> {
    return this.ask({ method: "GET", path: "/grants/tools" }, toolsAnswer);
  }

  /** Every grant file, each read on its own, and the problems of the set. */
  grants(): Promise<AdminResult<z.infer<typeof grantsAnswer>>> {
    return this.ask({ method: "GET", path: "/grants" }, grantsAnswer);
  }

  /** The whole audit log's verification, as the core keeps it up to date. */
  audit(): Promise<AdminResult<z.infer<typeof auditAnswer>>> {
    return this.ask({ method: "GET", path: "/audit" }, auditAnswer);
  }

  /** One page of audit records: up to `limit` from seq `from` on (the newest page without it). */
  auditRecords(
    options: { from?: number; limit: number },
  ): Promise<AdminResult<z.infer<typeof auditRecordsAnswer>>> {
    const from = options.from === undefined ? "" : `from=${options.from}&`;
    const path = `/audit/records?${from}limit=${options.limit}`;
    return this.ask({ method: "GET", path }, auditRecordsAnswer);
  }

  /** The newest audit records that name task `id`. */
  taskRecords(id: string): Promise<AdminResult<z.infer<typeof taskRecordsAnswer>>> {
    return this.ask({ method: "GET", path: `/tasks/${pathPart(id)}/records` }, taskRecordsAnswer);
  }

  /** Every task's model spend by model, from `since` (a date or time) on when given. */
  usage(since?: string): Promise<AdminResult<z.infer<typeof usageAnswer>>> {
    const query = since === undefined ? "" : `?since=${encodeURIComponent(since)}`;
    return this.ask({ method: "GET", path: `/usage${query}` }, usageAnswer);
  }

  /** Every task, newest first. */
  tasks(): Promise<AdminResult<z.infer<typeof tasksAnswer>>> {
    return this.ask({ method: "GET", path: "/tasks" }, tasksAnswer);
  }

  /** Starts a task. */
  startTask(body: StartTaskInput): Promise<AdminResult<z.infer<typeof taskAnswer>>> {
    return this.ask({ method: "POST", path: "/tasks", body }, taskAnswer);
  }

  /** One task with its pending approvals and journal. */
  task(id: string): Promise<AdminResult<z.infer<typeof taskShowAnswer>>> {
    return this.ask({ method: "GET", path: `/tasks/${pathPart(id)}` }, taskShowAnswer);
  }

  /** Stops a live task. */
  stopTask(
    id: string,
    options: { reason?: string } = {},
  ): Promise<AdminResult<z.infer<typeof taskAnswer>>> {
    const body = options.reason === undefined ? undefined : { reason: options.reason };
    return this.ask({ method: "POST", path: `/tasks/${pathPart(id)}/stop`, body }, taskAnswer);
  }

  /** The journal lines of task `id` after the first `after`, waiting up to `waitMs` for one. */
  journal(
    id: string,
    options: { after: number; waitMs: number; signal?: AbortSignal },
  ): Promise<AdminResult<z.infer<typeof journalPageAnswer>>> {
    const path = `/tasks/${pathPart(id)}/journal?after=${options.after}&wait=${options.waitMs}`;
    return this.ask({ method: "GET", path, signal: options.signal }, journalPageAnswer);
  }

  /** The vault's key names, never a value. */
  vaultKeys(): Promise<AdminResult<z.infer<typeof vaultKeysAnswer>>> {
    return this.ask({ method: "GET", path: "/api/vault" }, vaultKeysAnswer);
  }

  /** Sets vault key `name` to `value`. */
  setKey(name: string, value: string): Promise<AdminResult<z.infer<typeof vaultChangedAnswer>>> {
    return this.ask(
      { method: "PUT", path: `/api/vault/${pathPart(name)}`, body: { value } },
      vaultChangedAnswer,
    );
  }

  /** Removes vault key `name`. */
  removeKey(name: string): Promise<AdminResult<z.infer<typeof vaultChangedAnswer>>> {
    return this.ask({ method: "DELETE", path: `/api/vault/${pathPart(name)}` }, vaultChangedAnswer);
  }

  /** Turns vault key `name` off (`denied`) or on again for app `app`. */
  setKeyUse(
    name: string,
    options: { app: string; denied: boolean },
  ): Promise<AdminResult<z.infer<typeof vaultChangedAnswer>>> {
    const path = `/api/vault/${pathPart(name)}/${options.denied ? "deny" : "allow"}`;
    return this.ask({ method: "POST", path, body: { app: options.app } }, vaultChangedAnswer);
  }

  /** The owner's apps, as `gurt app list` shows them. */
  apps(): Promise<AdminResult<z.infer<typeof appsAnswer>>> {
    return this.ask({ method: "GET", path: "/apps" }, appsAnswer);
  }

  /** One app's facts, as `gurt app show` shows them: keys only as set or not, never a value. */
  app(name: string): Promise<AdminResult<z.infer<typeof appAnswer>>> {
    return this.ask({ method: "GET", path: `/apps/${pathPart(name)}` }, appAnswer);
  }

  /** Installs an app from a folder's files or `npm:PACKAGE@VERSION`. */
  addApp(body: AddAppInput): Promise<AdminResult<z.infer<typeof appAnswer>>> {
    return this.ask({ method: "POST", path: "/apps", body }, appAnswer);
  }

  /** Turns an app's tools on or off. */
  setAppEnabled(name: string, enabled: boolean): Promise<AdminResult<z.infer<typeof appAnswer>>> {
    const path = `/apps/${pathPart(name)}/${enabled ? "enable" : "disable"}`;
    return this.ask({ method: "POST", path }, appAnswer);
  }

  /** Removes an app: its tools, its server, its folder and its user. */
  removeApp(name: string): Promise<AdminResult<z.infer<typeof appRemovedAnswer>>> {
    return this.ask({ method: "DELETE", path: `/apps/${pathPart(name)}` }, appRemovedAnswer);
  }

  /** Reads an app's edited app.toml again and restarts its server with it. */
  reloadApp(name: string): Promise<AdminResult<z.infer<typeof appAnswer>>> {
    return this.ask({ method: "POST", path: `/apps/${pathPart(name)}/reload` }, appAnswer);
  }

  /** Every app's manifest read again: the problems. */
  appsCheck(): Promise<AdminResult<z.infer<typeof appsCheckAnswer>>> {
    return this.ask({ method: "GET", path: "/apps/check" }, appsCheckAnswer);
  }

  /** Sends a request and checks a 200 answer against `schema`; any other status is a refusal. */
  async ask<S extends z.ZodType>(
    request: AdminRequest,
    schema: S,
  ): Promise<AdminResult<z.output<S>>> {
    let answer;
    try {
      // A read may go on a connection kept from an earlier answer (it is safe to send twice).
      answer = await requestJson(this.socket, { ...request, repeatable: request.method === "GET" });
    } catch (error) {
      if (error instanceof SocketUnreachableError) throw new CoreUnreachableError(this.socket);
      throw error;
    }
    if (answer.status !== 200) return refusal(answer.status, answer.body);
    const parsed = schema.safeParse(answer.body);
    if (!parsed.success) throw new AdminAnswerError(request, problemOf(parsed.error));
    return { ok: true, value: parsed.data };
  }

  /**
   * Sends a request as it came (method, path with its query, body bytes as JSON) and returns the
   * core's answer as it is: the owner API's way to the same handlers.
   */
  async forward(request: { method: string; path: string; body?: Uint8Array }): Promise<Response> {
    let answer;
    try {
      answer = await requestRaw(this.socket, {
        method: request.method,
        path: request.path,
        body: request.body,
        repeatable: request.method === "GET",
      });
    } catch (error) {
      if (error instanceof SocketUnreachableError) throw new CoreUnreachableError(this.socket);
      throw error;
    }
    const headers = new Headers();
    const type = answer.headers.get("content-type");
    if (type !== undefined) headers.set("content-type", type);
    return new Response(answer.body.byteLength === 0 ? null : answer.body.slice(), {
      status: answer.status,
      headers,
    });
  }
}

/** A refusal from the core's answer: its sentence and code, or the answer itself if it has none. */
function refusal(status: number, body: unknown): AdminResult<never> {
  const parsed = errorAnswer.safeParse(body);
  if (parsed.success) {
    return { ok: false, status, error: parsed.data.error, code: parsed.data.code ?? null };
  }
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return {
    ok: false,
    status,
    error: text === "" ? `the core answered ${status}` : text,
    code: null,
  };
}

/** The first problem zod found, as `path: message`. */
function problemOf(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue.path.length === 0 ? "the answer" : issue.path.join(".");
  return `${where}: ${issue.message}`;
}

/** A value placed in a path: encoded, so it stays one segment. */
function pathPart(value: string | number): string {
  return encodeURIComponent(String(value));
}
