/**
 * `gurt app-host MODULE`, the app-host role: serves a module app (docs/app-sdk.md) as an MCP server
 * on stdio, so the core speaks to it as to any other app. At start it takes the app's vault keys
 * out of its environment (GURT_APP_SECRET_<NAME>, read once, then deleted, before the module
 * loads), loads the module, and checks its shape: a bad module is one line on stderr and a non-zero
 * exit before anything is answered. Then tools/list answers the tools and tools/call runs one, with
 * ctx.key from the request's `_meta["gurt/idempotency-key"]` (a call without one is refused).
 */
import denoJson from "../../deno.json" with { type: "json" };
import { initializeAnswer, INVALID_PARAMS, type Method, RpcError, serveLines } from "../mcp/mod.ts";
import { IDEMPOTENCY_KEY_META, SECRET_ENV_PREFIX, type ToolContext } from "./app_sdk.ts";
import { AppModuleError, checkAppModule, type CheckedTool } from "./app_shape.ts";

/** What `gurt app-host` gives the role. */
export interface AppHostArgs {
  /** The module's absolute path. */
  module: string;
  /** The app's one writable folder (GURT_APP_HOME, else HOME), or null. */
  home: string | null;
}

/** The longest idempotency key taken. */
const MAX_KEY = 1024;

/** Serves the module's tools on stdio until the client closes it; a bad module throws first. */
export default async function main(args: AppHostArgs): Promise<number> {
  const secrets = takeSecrets();
  const tools = await loadTools(args.module);
  await serveLines(
    { input: Deno.stdin.readable, output: Deno.stdout.writable },
    () => hostMethods(tools, { secrets, home: args.home }),
    // The core closes stdin to stop the app: a call already running finishes and is answered.
    { settle: (running) => running > 0 && console.error(stillRunning(running)) },
  );
  return 0;
}

/**
 * The vault keys the core gave the app, by name, taken out of the process's environment so that
 * neither the module's code nor any program it could start finds them there.
 */
export function takeSecrets(): ReadonlyMap<string, string> {
  const secrets = new Map<string, string>();
  for (const [name, value] of Object.entries(Deno.env.toObject())) {
    if (!name.startsWith(SECRET_ENV_PREFIX)) continue;
    Deno.env.delete(name);
    const key = name.slice(SECRET_ENV_PREFIX.length);
    if (key !== "") secrets.set(key, value);
  }
  return secrets;
}

/** Imports the module at `path` and checks its tools; throws one line saying what is wrong. */
export async function loadTools(path: string): Promise<CheckedTool[]> {
  let module: Record<string, unknown>;
  try {
    module = await import(new URL(`file://${encodePath(path)}`).href);
  } catch (error) {
    const first = (error instanceof Error ? error.message : String(error)).split("\n")[0]
      .replace(/\.$/, "");
    throw new AppModuleError(
      `${path}: the module could not be loaded: ${first}; see runbook.md#app-module-invalid`,
    );
  }
  return checkAppModule(path, module);
}

/** The `_meta` key of tools/list under which a module app's tool names the keys it reads. */
export const SECRETS_META = "gurt/secrets";

/** The MCP methods of the app host, for the checked tools. */
function hostMethods(
  tools: CheckedTool[],
  given: { secrets: ReadonlyMap<string, string>; home: string | null },
): Record<string, Method> {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listing = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: { readOnlyHint: tool.readOnly },
    // The keys the tool reads: the core calls it only while each of these is given to the app.
    _meta: { [SECRETS_META]: [...tool.secrets] },
  }));
  return {
    initialize: (params) =>
      initializeAnswer(params, {
        name: "gurt-app-host",
        version: denoJson.version,
        capabilities: { tools: {} },
      }),
    ping: () => ({}),
    "tools/list": () => ({ tools: listing }),
    "tools/call": (params, call) => {
      const tool = typeof params.name === "string" ? byName.get(params.name) : undefined;
      if (tool === undefined) {
        throw new RpcError(
          INVALID_PARAMS,
          `the app has no tool ${JSON.stringify(params.name)} (it has ${
            [...byName.keys()]
              .join(", ")
          }); see runbook.md#app-call-refused`,
        );
      }
      const key = keyOf(params._meta);
      const input = params.arguments ?? {};
      // Cancelled before it started (both lines came at once): its answer is dropped; run nothing.
      if (call.signal.aborted) return failed(`${tool.name}: the call was cancelled`);
      const invalid = tool.check(input);
      if (invalid !== null) return failed(`${tool.name}: ${invalid}`);
      const ctx: ToolContext = {
        key,
        secret: (name) => secretFor(tool, { name, secrets: given.secrets }),
        signal: call.signal,
        log: (line) => console.error(`${tool.name}: ${String(line).replace(/\r?\n/g, " ")}`),
        home: given.home,
      };
      return runTool(tool, { ctx, input });
    },
  };
}

/** The call's idempotency key from its `_meta`; a call without one is refused. */
function keyOf(meta: unknown): string {
  const key = typeof meta === "object" && meta !== null
    ? (meta as Record<string, unknown>)[IDEMPOTENCY_KEY_META]
    : undefined;
  if (typeof key !== "string" || key === "" || key.length > MAX_KEY) {
    throw new RpcError(
      INVALID_PARAMS,
      `the call has no idempotency key: tools/call must carry _meta["${IDEMPOTENCY_KEY_META}"], ` +
        `a string of 1 to ${MAX_KEY} characters, so nothing was run; ` +
        `see runbook.md#app-call-refused`,
    );
  }
  return key;
}

/** ctx.secret: the value of a key the tool declares and the box gave the app; else a sentence. */
function secretFor(
  tool: CheckedTool,
  asked: { name: string; secrets: ReadonlyMap<string, string> },
): string {
  const { name, secrets } = asked;
  if (!tool.secrets.includes(name)) {
    throw new Error(
      `the vault key ${String(name)} is not among the secrets the tool ${tool.name} declares ` +
        `(${tool.secrets.length === 0 ? "none" : tool.secrets.join(", ")}), so it cannot read ` +
        `it; see runbook.md#secret-refused`,
    );
  }
  const value = secrets.get(name);
  if (value === undefined) {
    throw new Error(
      `the box gave this app no value for the vault key ${name}: it is not set, not among the ` +
        `app's secrets in app.toml, or turned off for the app; see runbook.md#secret-refused`,
    );
  }
  return value;
}

/** Runs the tool and shapes its value (or its error) as an MCP CallToolResult. */
async function runTool(
  tool: CheckedTool,
  call: { ctx: ToolContext; input: unknown },
): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = await tool.run(call.ctx, call.input);
  } catch (error) {
    return failed(error instanceof Error ? error.message : String(error));
  }
  if (isPlainObject(value) && Array.isArray((value as { content?: unknown }).content)) {
    return passedThrough(value as Record<string, unknown>, tool.name);
  }
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  const text = JSON.stringify(value === undefined ? null : value);
  if (isPlainObject(value)) {
    return { content: [{ type: "text", text }], structuredContent: value };
  }
  return { content: [{ type: "text", text }] };
}

/** A result the tool built itself, passed on if its content is MCP content. */
function passedThrough(value: Record<string, unknown>, name: string): Record<string, unknown> {
  const content = value.content as unknown[];
  const bad = content.findIndex((item) =>
    !isPlainObject(item) || typeof (item as { type?: unknown }).type !== "string"
  );
  if (bad !== -1) {
    return failed(`${name} returned content whose item ${bad + 1} is not MCP content (no type)`);
  }
  const result: Record<string, unknown> = { content };
  if (isPlainObject(value.structuredContent)) result.structuredContent = value.structuredContent;
  if (value.isError === true) result.isError = true;
  return result;
}

function failed(message: string): Record<string, unknown> {
  return { content: [{ type: "text", text: message }], isError: true };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** An absolute path as a file URL's path: each segment percent-encoded. */
function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

/** The log line for calls still running when the input ends. */
function stillRunning(running: number): string {
  return `gurt app-host: the input ended with ${running} call${running === 1 ? "" : "s"} ` +
    `still running; answering before it exits`;
}
