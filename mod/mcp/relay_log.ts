/**
 * MCP's logging utility for `gurt mcp`: the `logging` capability, `logging/setLevel`, and
 * `notifications/message` with the relay's own log lines at or above the level the client set.
 * Before the client sets a level, nothing is sent (an agent that never asks sees no new
 * messages). A line is one of the relay's own sentences: what it did with a call (a tool's name, its
 * MCP one or gurt's, an HTTP status, an approval's number), never a tool's input or output, a
 * question, the owner's reason, a socket's path or anything the core answered, so nothing from the
 * vault or the task's data can be in it. Loads nothing.
 */
import { INVALID_PARAMS, type Notify, RpcError } from "./json_rpc.ts";

/** MCP's log levels (RFC 5424's severities), least severe first. */
export const LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;

/** One of MCP's log levels. */
export type LogLevel = typeof LOG_LEVELS[number];

/** The logger name each line carries. */
export const RELAY_LOGGER = "gurt";

/** A tool name shown as it is; any other is shown as "a tool". */
const PLAIN_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** The relay's log for its client: the level it asked for, and the lines at or above it. */
export class RelayLog {
  readonly #notify: Notify;
  /** The index in LOG_LEVELS of the least severe level sent; null until the client sets one. */
  #threshold: number | null = null;

  constructor(notify: Notify) {
    this.#notify = notify;
  }

  /** `logging/setLevel`: `{}` once set; -32602 naming the levels for anything else. */
  setLevel(params: Record<string, unknown>): Record<string, never> {
    const index = LOG_LEVELS.indexOf(params.level as LogLevel);
    if (typeof params.level !== "string" || index === -1) {
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: logging/setLevel's level must be one of ${LOG_LEVELS.join(", ")}`,
      );
    }
    this.#threshold = index;
    return {};
  }

  /** Sends `message` at `level` if the client asked for that level or a less severe one. */
  send(level: LogLevel, message: string): void {
    if (this.#threshold === null || LOG_LEVELS.indexOf(level) < this.#threshold) return;
    this.#notify("notifications/message", { level, logger: RELAY_LOGGER, data: message });
  }
}

/** A tool's name as a log line shows it: as it is when plain, else "a tool". */
export function shownTool(name: string): string {
  return PLAIN_NAME.test(name) ? name : "a tool";
}
