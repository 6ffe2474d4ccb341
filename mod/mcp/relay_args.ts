/**
 * What `gurt mcp` is given, and how its words become that. Imports nothing: main.ts reads it
 * before anything else of gurt loads.
 */

/** What the relay role is given. */
export interface RelayArgs {
  /** The task's broker socket (BOX_SOCKET). */
  socket: string;
  /** The longest a call or question waits on the box owner before it answers "call again". */
  waitMs: number;
  /**
   * Whether box_permission is listed and called (`--permission-tool`): only Claude Code's settings
   * send it anything, so other agents' models are not shown a tool that means nothing to them.
   */
  permissionTool: boolean;
  /**
   * Whether box_ask_user, Droid's AskUser in `droid exec`, is listed and called
   * (`--ask-user-tool`, which only Droid's settings give).
   */
  askUserTool?: boolean;
}

/**
 * The relay's wait on the owner when none is given: under every client's own call timeout
 * (OpenCode 60 s, Droid 180 s, Codex 300 s, Claude Code far longer), so the agent reads the
 * "call again" text, never a timeout.
 */
export const DEFAULT_WAIT_MS = 50_000;

/** `--wait-ms`'s value as a number; throws a sentence naming the option for anything else. */
export function parseWaitMs(text: string): number {
  const ms = /^[0-9]{1,10}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(ms)) {
    throw new Error(
      `--wait-ms must be a whole number of milliseconds, 0 or more; ${JSON.stringify(text)} is not`,
    );
  }
  return ms;
}
