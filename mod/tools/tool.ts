/** How a tool is declared in code: its name, input schema, cost, the secrets it may read, its run. */

/** What a running app tool may use: the task, its idempotency key, and its declared secrets. */
export interface ToolContext {
  /** The task the call belongs to. */
  readonly task: string;
  /** `<task id>.<key>`: pass it on as an idempotency key (Stripe and most payment APIs take one). */
  readonly key: string;
  /** The box home: a tool may keep its own files under `tasks/<task>/`. */
  readonly home: string;
  /** The value of a declared vault key; throws for any key the tool did not declare. */
  secret(name: string): string;
  /** Aborts when the call must end: its tool timeout passed, or the core is closing. */
  readonly signal?: AbortSignal;
}

/**
 * How a tool's input is checked: zod's schemas have this shape, and an installed app's tools check
 * theirs against the server's JSON Schema (mod/apps). A failure may say what was wrong.
 */
export interface InputCheck<I> {
  safeParse(value: unknown):
    | { success: true; data: I }
    | { success: false; error?: { message: string } };
}

/** An app tool, run inside the core. `I` is the parsed input. */
export interface AppTool<I = unknown> {
  /** `<app>.<verb>`, lowercase. */
  readonly name: string;
  readonly description: string;
  /**
   * The only description of the input: validates it and types `run`. A zod schema (the built-in
   * apps') also generates /tools' JSON Schema; any other check comes with it in `inputSchema`.
   */
  readonly input: InputCheck<I>;
  /** The input's JSON Schema as /tools publishes it (an app server's own), for a non-zod check. */
  readonly inputSchema?: unknown;
  /** MCP's tool annotations as the app's server gave them (title, hints), for /tools and gurt mcp. */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /**
   * True for a tool that changes nothing (it only reads or computes); absent or false means it may
   * change things. GET /tools publishes it, and `gurt mcp` makes it MCP's readOnlyHint.
   */
  readonly readOnly?: boolean;
  /** The call's cost in US cents, reserved before it runs. Absent means free. */
  cost?(input: I): number;
  /** The vault keys `run` may read through `ctx.secret`. */
  readonly secrets: readonly string[];
  run(ctx: ToolContext, input: I): Promise<unknown>;
}

const TOOL_NAME = /^[a-z][a-z0-9-]{0,31}\.[a-z][a-z0-9_]{0,63}$/;

/** Checks a tool's declaration and returns it typed; a bad name is a programming error. */
export function defineTool<I>(tool: AppTool<I>): AppTool<I> {
  if (!TOOL_NAME.test(tool.name)) {
    throw new Error(`tool name ${JSON.stringify(tool.name)} must be <app>.<verb> in lowercase`);
  }
  return tool;
}
