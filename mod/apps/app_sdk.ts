/**
 * The App SDK (docs/app-sdk.md): the shape in which a `kind = "module"` app exports its tools, and
 * what a tool's run is given. Types and the name rule only: an app imports them with
 * `import type`, which Deno erases when it runs the app, so an app needs nothing of gurt at run
 * time. `gurt app-host` (app_host.ts) checks the shape and serves the tools over MCP.
 */

/** What a tool's run is given besides its input. */
export interface ToolContext {
  /**
   * The call's idempotency key (`<task id>.<key>`, from the MCP request's
   * `_meta["gurt/idempotency-key"]`): the same call asked again carries the same key. Pass it on
   * to a service that takes one, or use it to do a call's work once.
   */
  readonly key: string;
  /**
   * The value of a vault key this tool lists in `secrets`. Throws a sentence for any other name,
   * and for a declared key the box did not give the app (unset, or turned off for it).
   */
  secret(name: string): string;
  /** Aborts when the caller cancels the call; pass it to fetch and to anything that waits. */
  readonly signal: AbortSignal;
  /** Writes one line to the app's log (its stderr, which the core keeps in apps/<name>/app.log). */
  log(line: string): void;
  /**
   * The app's one writable folder (GURT_APP_HOME, else HOME), or null when it has none: keep the
   * app's files there.
   */
  readonly home: string | null;
}

/** A tool's input schema: a JSON Schema (2020-12 unless it says `$schema`) of an object. */
export interface InputSchema {
  type: "object";
  [keyword: string]: unknown;
}

/** One piece of an MCP tool result (text, image, audio, resource_link, resource). */
export interface ToolContent {
  type: string;
  [field: string]: unknown;
}

/** An MCP CallToolResult, for a run that builds its result itself. */
export interface ToolResult {
  content: ToolContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * One tool of a module app. `I` is its input's type, which `input` describes. The cost of a call
 * is not here: it is the owner's to set, in the manifest (`[tools.NAME] cost_cents`), and a
 * `cost` field is refused.
 */
export interface AppTool<I = Record<string, unknown>> {
  /** The tool's name inside its app: the box calls it `<app>.<name>`. TOOL_NAME says which. */
  readonly name: string;
  /** What the tool does, for the agent that chooses it and the owner who approves it. */
  readonly description: string;
  /** The only description of the input; the box and the app host both validate with it. */
  readonly input: InputSchema;
  /** True for a tool that changes nothing (MCP's readOnlyHint); absent means false. */
  readonly readOnly?: boolean;
  /** The vault keys run may read through ctx.secret; absent means none. */
  readonly secrets?: readonly string[];
  /**
   * Does the call. Its value becomes the result: a ToolResult as it is; a plain object as its
   * JSON text and structured content; a string as its text; anything else as its JSON text. A
   * thrown error becomes a result with isError and the error's message.
   */
  run(ctx: ToolContext, input: I): unknown;
}

/** What a module app exports, as its default export or as `tools`. */
export type AppTools = readonly AppTool<never>[];

/** A tool's name: a lower-case letter, then lower-case letters, digits and _, 64 at most. */
export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** The `_meta` field of a tools/call request that carries the call's idempotency key. */
export const IDEMPOTENCY_KEY_META = "gurt/idempotency-key";

/** The environment variable prefix that gives the app host a vault key's value. */
export const SECRET_ENV_PREFIX = "GURT_APP_SECRET_";
