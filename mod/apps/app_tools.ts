/**
 * An app's tools as the box offers them: each tool its server lists (MCP tools/list) becomes the
 * box tool `<app>.<verb>`, its input checked against the server's own JSON Schema by Ajv before the
 * call is decided, its cost and description from the manifest's [tools.<verb>].
 *
 * A box verb is the server's name in snake case (`get-env` and `getEnv` are `get_env`), never two
 * underscores in a row (`gurt mcp` writes the box's `.` as `__`). A tool whose
 * name makes no box verb, two tools that make the same one, and a schema Ajv cannot compile are
 * left out, each with a sentence that says why (`gurt app show`), never half-offered.
 */
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import { boxVerb } from "./kept_names.ts";

/** Where the box verb is made (kept_names.ts, light for the owner's commands). */
export { boxVerb };

/** One tool as an app's server lists it (the fields of MCP's Tool that the box reads). */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** What the manifest says of one tool. */
export interface ToolSettings {
  costCents?: number;
  description?: string;
}

/** A tool of an app, ready to be offered. */
export interface OfferedTool {
  /** `<app>.<verb>`. */
  boxName: string;
  /** The server's own name, which tools/call uses. */
  serverName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  readOnly: boolean;
  costCents: number;
  validate: ValidateFunction;
  /**
   * The vault keys the tool reads, where its server says (a module app's host does, in `_meta`);
   * null: any of the app's keys.
   */
  secrets: readonly string[] | null;
}

/** A tool the server lists that the box does not offer, and why. */
export interface LeftOutTool {
  serverName: string;
  problem: string;
}

/** The most tools one app may offer: a longer list is refused whole. */
export const MAX_TOOLS = 1000;

/** The tools of app `app` from its server's list, with what is left out. */
export function offeredTools(
  app: string,
  listed: readonly ListedTool[],
  settings: ReadonlyMap<string, ToolSettings>,
): { tools: OfferedTool[]; leftOut: LeftOutTool[] } {
  if (listed.length > MAX_TOOLS) {
    throw new Error(`the app's server lists ${listed.length} tools, more than ${MAX_TOOLS}`);
  }
  const byVerb = new Map<string, ListedTool[]>();
  const leftOut: LeftOutTool[] = [];
  for (const tool of listed) {
    if (typeof tool?.name !== "string" || tool.name.length > 128) {
      leftOut.push({ serverName: String(tool?.name).slice(0, 128), problem: "it has no name" });
      continue;
    }
    const verb = boxVerb(tool.name);
    if (verb === null) {
      leftOut.push({
        serverName: tool.name,
        problem: "its name makes no box tool name (a letter, then up to 63 letters, digits or _)",
      });
      continue;
    }
    byVerb.set(verb, [...(byVerb.get(verb) ?? []), tool]);
  }
  const tools: OfferedTool[] = [];
  for (const [verb, same] of byVerb) {
    if (same.length > 1) {
      for (const tool of same) {
        leftOut.push({
          serverName: tool.name,
          problem: `${
            same.map((t) => JSON.stringify(t.name)).join(" and ")
          } are both ${app}.${verb}`,
        });
      }
      continue;
    }
    const tool = same[0];
    const compiled = compileSchema(tool.inputSchema);
    if (typeof compiled === "string") {
      leftOut.push({
        serverName: tool.name,
        problem: `its input schema does not compile: ${compiled}`,
      });
      continue;
    }
    const own = settings.get(verb) ?? {};
    tools.push({
      boxName: `${app}.${verb}`,
      serverName: tool.name,
      description: own.description ?? tool.description ?? tool.title ?? "",
      inputSchema: tool.inputSchema,
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
      readOnly: tool.annotations?.readOnlyHint === true,
      costCents: own.costCents ?? 0,
      validate: compiled,
      secrets: keysOf(tool._meta?.["gurt/secrets"]),
    });
  }
  tools.sort((a, b) => a.boxName < b.boxName ? -1 : a.boxName > b.boxName ? 1 : 0);
  return { tools, leftOut };
}

/**
 * Whether this process runs V8's linear regular-expression engine (the `l` flag, which gurt's
 * V8_FLAGS turn on: mod/config/code_dir.ts).
 */
export const LINEAR_PATTERNS = (() => {
  try {
    new RegExp("a", "l");
    return true;
  } catch {
    return false;
  }
})();

/**
 * A schema's `pattern` and `patternProperties` are the app's, the strings they meet a task's: each
 * is run by V8's linear engine, so no pattern can backtrack for ever on a task's input. A pattern
 * that engine cannot run (a back-reference, a look-around, Unicode classes) makes its schema one
 * that does not compile, and its tool is left out saying so. Without the engine (a process started
 * without gurt's V8 flags, such as a test runner) patterns run as Ajv runs them.
 */
const linearPatterns = Object.assign(
  (pattern: string, _flags: string) => new RegExp(pattern, "l"),
  { code: "new RegExp" },
);

const ajvOptions = {
  strict: false,
  allErrors: false,
  validateFormats: false,
  ...(LINEAR_PATTERNS ? { code: { regExp: linearPatterns } } : {}),
};
const draft07 = new Ajv(ajvOptions);
const draft2020 = new Ajv2020(ajvOptions);

/** The largest input schema compiled, as JSON, and how deep it may nest. */
const MAX_SCHEMA_CHARS = 256 * 1024;
const MAX_SCHEMA_DEPTH = 64;

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_SCHEMA_DEPTH || typeof value !== "object" || value === null) return depth;
  let deepest = depth;
  for (const inner of Object.values(value)) deepest = Math.max(deepest, depthOf(inner, depth + 1));
  return deepest;
}

/** Ajv's check of a tool's input schema, or what is wrong with the schema. */
function compileSchema(schema: unknown): ValidateFunction | string {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return "it is not a JSON object";
  }
  const object = schema as Record<string, unknown>;
  if (object.type !== "object") return 'its type is not "object"';
  const size = JSON.stringify(object).length;
  if (size > MAX_SCHEMA_CHARS) return `it is ${size} characters, more than ${MAX_SCHEMA_CHARS}`;
  if (depthOf(object) > MAX_SCHEMA_DEPTH) return `it nests deeper than ${MAX_SCHEMA_DEPTH}`;
  const dialect = typeof object.$schema === "string" ? object.$schema : "";
  // A schema without $schema is read as 2020-12, as MCP 2025-11-25 says.
  const ajv = /draft-0[4-7]/.test(dialect) ? draft07 : draft2020;
  try {
    // Ajv keeps compiled schemas by their $id; an app's must not meet another's.
    const { $id: _id, ...rest } = object;
    const validate = ajv.compile(rest);
    // The function stands on its own; Ajv's cache would keep every listing ever compiled.
    ajv.removeSchema(rest);
    return validate;
  } catch (error) {
    return error instanceof Error ? error.message.slice(0, 300) : String(error);
  }
}

function keysOf(value: unknown): string[] | null {
  if (!Array.isArray(value) || value.length > 64) return null;
  return value.every((name) => typeof name === "string" && /^[A-Z][A-Z0-9_]{0,127}$/.test(name))
    ? value as string[]
    : null;
}

/** What is wrong with `input` for `tool`, in a sentence, or null when it fits the schema. */
export function inputProblem(tool: OfferedTool, input: unknown): string | null {
  if (tool.validate(input)) return null;
  const first = tool.validate.errors?.[0];
  if (first === undefined) return "the input does not fit the tool's schema";
  const where = first.instancePath === "" ? "the input" : `input${first.instancePath}`;
  return `${where} ${first.message ?? "does not fit the tool's schema"}`;
}
