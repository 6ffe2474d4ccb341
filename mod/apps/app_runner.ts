/**
 * One app's server while the core runs: started at its first call (or at once, for `start =
 * "eager"`), its tools listed (and listed again on notifications/tools/list_changed), each call
 * sent as MCP tools/call with the box's idempotency key in `_meta`, stopped after `idleMs` without
 * a call. A server that ends by itself is started again at a later call, after a pause that doubles
 * with each failure (1 s up to a minute) and is forgotten once it has run a minute. A call never
 * waits past `callTimeoutMs`: a server that does not answer in time is stopped (it may be hung on
 * something else too) and the call fails with a fixed sentence; so does every call while the app
 * cannot start or pauses.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { type ListedTool, MAX_TOOLS } from "./app_tools.ts";
import { Mutex } from "../common/mod.ts";
import { RunError } from "../runtime/mod.ts";

/** The `_meta` key that carries a call's idempotency key, `<task id>.<key>`. */
export const IDEMPOTENCY_META = "gurt/idempotency-key";

/** The first pause after a failure, and the longest. */
export const FIRST_PAUSE_MS = 1000;
export const LONGEST_PAUSE_MS = 60_000;

/** A connection to an app's server, as its launcher makes it. */
export interface AppConnection {
  transport: Transport;
  /** Says why the server ended, where the launcher knows (an exit status, its last words). */
  ended?: () => string | null;
}

/** What a runner needs from the core. */
export interface AppRunnerDeps {
  /** The app's name. */
  app: string;
  /** Starts the app's server (in its sandbox) and opens the connection to it. */
  connect(): Promise<AppConnection>;
  /** Told of each tool list the server gives. */
  onTools(tools: ListedTool[]): void | Promise<void>;
  /** The core's log. */
  log(line: string): void;
  idleMs: number;
  callTimeoutMs: number;
  clock?: () => number;
}

/**
 * A call that the app could not answer: the task sees this sentence as it is, as it does a
 * runtime's (a RunError: a sentence written in gurt, with what an app's server said redacted).
 */
export class AppCallError extends RunError {
  constructor(message: string) {
    super(message);
    this.name = "AppCallError";
  }
}

/** What `gurt app show` says of a running app. */
export interface RunnerState {
  state: "stopped" | "starting" | "running" | "paused";
  lastError: string | null;
  /** When a paused app may start again (ms since the epoch). */
  pausedUntil: number | null;
}

/** The server of one app. */
export class AppRunner {
  readonly #deps: AppRunnerDeps;
  readonly #clock: () => number;
  #client: Promise<Client> | null = null;
  #connection: AppConnection | null = null;
  #running = false;
  #startedAt = 0;
  #pause = 0;
  #pausedUntil = 0;
  #lastError: string | null = null;
  #inFlight = 0;
  #idle: ReturnType<typeof setTimeout> | null = null;
  #stopping = false;
  /**
   * Settles once the last server stopped here is gone, its sandbox ended: a new one starts only
   * then, or the old one's end (its cgroup killed, by the app's name) would kill the new one.
   */
  #gone: Promise<void> = Promise.resolve();
  readonly #listing = new Mutex();

  constructor(deps: AppRunnerDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? Date.now;
  }

  state(): RunnerState {
    const paused = this.#pausedUntil > this.#clock() && this.#client === null;
    return {
      state: this.#client === null
        ? (paused ? "paused" : "stopped")
        : (this.#running ? "running" : "starting"),
      lastError: this.#lastError,
      pausedUntil: paused ? this.#pausedUntil : null,
    };
  }

  /** Starts the server now (for `start = "eager"` and `gurt app add`), and lists its tools. */
  async start(): Promise<void> {
    this.#inFlight++;
    try {
      await this.#ready(AbortSignal.timeout(this.#deps.callTimeoutMs));
    } finally {
      this.#settled();
    }
  }

  /** Calls one tool of the server: its result, or an AppCallError that says why not. */
  async call(
    serverName: string,
    input: unknown,
    key: string,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    this.#inFlight++;
    const deadline = AbortSignal.timeout(this.#deps.callTimeoutMs);
    const both = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
    try {
      const client = await this.#ready(both);
      const result = await client.callTool(
        {
          name: serverName,
          arguments: input as Record<string, unknown>,
          _meta: { [IDEMPOTENCY_META]: key },
        },
        undefined,
        { signal: both, timeout: this.#deps.callTimeoutMs },
      );
      return result as CallToolResult;
    } catch (error) {
      if (error instanceof AppCallError) throw error;
      if (deadline.aborted || isTimeout(error)) {
        // Whatever it is doing, it is not answering: it is stopped, and starts again when called.
        this.#lastError = `it did not answer within ${this.#deps.callTimeoutMs} ms`;
        await this.#drop();
        throw new AppCallError(
          `the app ${this.#deps.app} did not answer within ${this.#deps.callTimeoutMs} ms; it was stopped and starts again at its next call; see runbook.md#app-not-answering`,
        );
      }
      if (signal?.aborted) {
        throw new AppCallError(`the call to the app ${this.#deps.app} was ended`);
      }
      if (error instanceof McpError && codeOf(error) !== ErrorCode.ConnectionClosed) {
        // The server answered with an error of its own: the task reads it, redacted by the broker.
        throw new AppCallError(
          `the app ${this.#deps.app} answered with an error: ${messageOf(error)}`,
        );
      }
      throw new AppCallError(this.#failedSentence());
    } finally {
      this.#settled();
    }
  }

  /** Stops the server, if it runs; a later call starts it again. */
  async stop(): Promise<void> {
    this.#stopping = true;
    try {
      await this.#drop();
    } finally {
      this.#stopping = false;
    }
  }

  #ready(signal: AbortSignal): Promise<Client> {
    if (this.#client !== null) return this.#client;
    const now = this.#clock();
    if (now < this.#pausedUntil) {
      return Promise.reject(new AppCallError(this.#failedSentence()));
    }
    const starting = this.#open(signal);
    this.#client = starting;
    starting.catch(() => {
      if (this.#client === starting) this.#client = null;
    });
    return starting;
  }

  async #open(signal: AbortSignal): Promise<Client> {
    await this.#gone;
    let connection: AppConnection;
    try {
      connection = await this.#deps.connect();
    } catch (error) {
      this.#failed(`it could not be started: ${messageOf(error)}`);
      throw new AppCallError(this.#failedSentence());
    }
    this.#connection = connection;
    const client = new Client({ name: "gurt", version: "0.1.0" }, { capabilities: {} });
    client.onclose = () => this.#closed(client, connection);
    // However often a server says its list changed, one listing runs and at most one waits.
    let waiting = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (waiting) return;
      waiting = true;
      await this.#list(client, undefined, () => (waiting = false)).catch((error) =>
        this.#deps.log(
          `gurt: app ${this.#deps.app}: its tools could not be listed again: ${messageOf(error)}`,
        )
      );
    });
    try {
      await client.connect(connection.transport, { signal, timeout: this.#deps.callTimeoutMs });
      await this.#list(client, signal);
    } catch (error) {
      const why = signal.aborted
        ? `it did not start within ${this.#deps.callTimeoutMs} ms`
        : `it did not start: ${connection.ended?.() ?? startProblem(error)}`;
      this.#failed(why);
      await client.close().catch(() => {});
      this.#connection = null;
      throw new AppCallError(this.#failedSentence());
    }
    this.#running = true;
    this.#startedAt = this.#clock();
    return client;
  }

  /** Lists the server's tools; one listing at a time, so the newest list is the one kept. */
  #list(client: Client, signal?: AbortSignal, begun?: () => void): Promise<void> {
    return this.#listing.exclusive(() => {
      begun?.();
      return this.#listOnce(client, signal);
    });
  }

  async #listOnce(client: Client, signal?: AbortSignal): Promise<void> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const answer = await client.listTools(cursor === undefined ? {} : { cursor }, {
        signal,
        timeout: this.#deps.callTimeoutMs,
      });
      tools.push(...answer.tools as ListedTool[]);
      // A server that pages on without end is refused, not followed.
      if (tools.length > MAX_TOOLS) {
        throw new Error(`the app's server lists ${tools.length} tools, more than ${MAX_TOOLS}`);
      }
      cursor = answer.nextCursor;
      if (cursor === undefined) break;
    }
    await this.#deps.onTools(tools);
  }

  #closed(client: Client, connection: AppConnection): void {
    if (this.#connection !== connection) return;
    const ranFor = this.#clock() - this.#startedAt;
    this.#connection = null;
    this.#client = null;
    const wasRunning = this.#running;
    this.#running = false;
    if (this.#stopping || !wasRunning) return;
    if (ranFor >= LONGEST_PAUSE_MS) this.#pause = 0;
    this.#failed(`it ended: ${connection.ended?.() ?? "its connection closed"}`);
    void client;
  }

  #failed(why: string): void {
    this.#lastError = why;
    this.#pause = this.#pause === 0 ? FIRST_PAUSE_MS : Math.min(LONGEST_PAUSE_MS, this.#pause * 2);
    this.#pausedUntil = this.#clock() + this.#pause;
    this.#deps.log(`gurt: app ${this.#deps.app}: ${why}; next start in ${this.#pause / 1000} s`);
  }

  #failedSentence(): string {
    const wait = Math.max(0, Math.ceil((this.#pausedUntil - this.#clock()) / 1000));
    const when = wait > 0
      ? `it starts again at a call in ${wait} s`
      : "it starts again at the next call";
    return `the app ${this.#deps.app} is not running (${
      this.#lastError ?? "unknown"
    }); ${when}; see runbook.md#app-not-running`;
  }

  #drop(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    this.#running = false;
    const connection = this.#connection;
    this.#connection = null;
    if (client === null) return this.#gone;
    const before = this.#gone;
    const gone = (async () => {
      await before;
      const open = await client.catch(() => null);
      await open?.close().catch(() => {});
      await connection?.transport.close().catch(() => {});
    })();
    this.#gone = gone;
    return gone;
  }

  #settled(): void {
    this.#inFlight--;
    if (this.#idle !== null) clearTimeout(this.#idle);
    this.#idle = null;
    if (this.#inFlight > 0 || this.#client === null) return;
    const idle = setTimeout(() => {
      this.#idle = null;
      if (this.#inFlight === 0) this.stop().catch(() => {});
    }, this.#deps.idleMs);
    Deno.unrefTimer(idle);
    this.#idle = idle;
  }
}

function isTimeout(error: unknown): boolean {
  return error instanceof McpError && codeOf(error) === ErrorCode.RequestTimeout;
}

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown }).code;
}

/**
 * Why a server did not start: a remote server's refusal names its HTTP status, and for 401 and
 * 403 that the credentials its headers carry (vault keys) were refused.
 */
function startProblem(error: unknown): string {
  const status = error instanceof StreamableHTTPError
    ? (error as StreamableHTTPError).code
    : undefined;
  if (status === undefined) return messageOf(error);
  const refused = status === 401 || status === 403
    ? ": the server refused the credentials its headers carry (check the vault keys they use)"
    : "";
  return `its server answered HTTP ${status}${refused} (${messageOf(error)})`;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}
