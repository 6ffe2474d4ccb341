/**
 * Checks what a module app exports against the App SDK's shape (app_sdk.ts) and compiles each
 * tool's input schema. It runs no tool: what it is given is the module's namespace, already loaded.
 * Every problem is one sentence that names the file, the tool and the field.
 */
import type { ErrorObject } from "ajv";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { isKeyName } from "../vault/names.ts";
import { TOOL_NAME, type ToolContext } from "./app_sdk.ts";

/** A tool whose declaration passed the checks, with its input validator. */
export interface CheckedTool {
  name: string;
  description: string;
  /** The input schema as JSON, as tools/list publishes it. */
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  secrets: readonly string[];
  run: (ctx: ToolContext, input: unknown) => unknown;
  /** Null when `input` is valid, else a sentence naming what is wrong. */
  check: (input: unknown) => string | null;
}

/** A module that is not in the App SDK's shape: its message says where and what. */
export class AppModuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AppModuleError";
  }
}

const FIELDS = ["name", "description", "input", "readOnly", "secrets", "run"];
const COST_FIELDS = ["cost", "cost_cents", "costCents"];
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

/** The tools `module` (a module's namespace, loaded from `path`) exports, checked; else throws. */
export function checkAppModule(path: string, module: Record<string, unknown>): CheckedTool[] {
  const fail = (what: string): never => {
    throw new AppModuleError(`${path}: ${what}; see runbook.md#app-module-invalid`);
  };
  const hasDefault = module.default !== undefined;
  const hasTools = module.tools !== undefined;
  if (!hasDefault && !hasTools) {
    fail("exports no tools: export default (or export const tools) an array of tools");
  }
  if (hasDefault && hasTools && module.default !== module.tools) {
    fail("exports both a default and `tools`, and they differ: export the tools once");
  }
  const list = hasDefault ? module.default : module.tools;
  const which = hasDefault ? "its default export" : "its export `tools`";
  if (!Array.isArray(list)) fail(`${which} is not an array of tools`);
  const tools = list as unknown[];
  if (tools.length === 0) fail(`${which} is an empty array: an app has at least one tool`);
  const seen = new Set<string>();
  return tools.map((tool, index) => {
    const checked = checkTool(tool, { index, fail });
    if (seen.has(checked.name)) fail(`two tools are named ${checked.name}: names are unique`);
    seen.add(checked.name);
    return checked;
  });
}

function checkTool(
  tool: unknown,
  at: { index: number; fail: (what: string) => never },
): CheckedTool {
  const { index, fail } = at;
  if (!isPlainObject(tool)) fail(`tool ${index + 1} is not an object`);
  const fields = tool as Record<string, unknown>;
  const name = fields.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    fail(
      `tool ${index + 1} has the name ${JSON.stringify(name)}, which is not a tool name: a ` +
        `lower-case letter, then lower-case letters, digits and _, 64 characters at most`,
    );
  }
  const where = `tool ${name as string}`;
  for (const key of Object.keys(fields)) {
    if (COST_FIELDS.includes(key)) {
      fail(
        `${where} sets ${key}, but a tool's cost is the owner's to set, in app.toml ` +
          `([tools.${name as string}] cost_cents), not the app's`,
      );
    }
    if (!FIELDS.includes(key)) {
      fail(`${where} has the unknown field ${key} (a tool has ${FIELDS.join(", ")})`);
    }
  }
  if (typeof fields.description !== "string" || fields.description.trim() === "") {
    fail(`${where} has no description: a sentence that says what it does`);
  }
  if (fields.readOnly !== undefined && typeof fields.readOnly !== "boolean") {
    fail(`${where} has readOnly that is not true or false`);
  }
  const secrets = checkSecrets(fields.secrets, { where, fail });
  if (typeof fields.run !== "function") fail(`${where} has no run function`);
  const { inputSchema, check } = compileInput(fields.input, { where, fail });
  return {
    name: name as string,
    description: fields.description as string,
    inputSchema,
    readOnly: fields.readOnly === true,
    secrets,
    run: fields.run as CheckedTool["run"],
    check,
  };
}

function checkSecrets(
  value: unknown,
  at: { where: string; fail: (what: string) => never },
): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) at.fail(`${at.where} has secrets that is not an array of key names`);
  const names = value as unknown[];
  for (const name of names) {
    if (typeof name !== "string" || !isKeyName(name)) {
      at.fail(
        `${at.where} lists the secret ${JSON.stringify(name)}, which is not a vault key name ` +
          `(an upper-case letter, then upper-case letters, digits and _)`,
      );
    }
  }
  if (new Set(names).size !== names.length) at.fail(`${at.where} lists a secret twice`);
  return Object.freeze([...names as string[]]);
}

/** The schema as JSON and its validator; a schema that is not an object's or will not compile fails. */
function compileInput(
  value: unknown,
  at: { where: string; fail: (what: string) => never },
): { inputSchema: Record<string, unknown>; check: CheckedTool["check"] } {
  const { where, fail } = at;
  if (!isPlainObject(value) || (value as Record<string, unknown>).type !== "object") {
    fail(`${where} has an input that is not a JSON Schema of an object (type "object")`);
  }
  let inputSchema: Record<string, unknown>;
  try {
    inputSchema = JSON.parse(JSON.stringify(value));
  } catch (error) {
    fail(`${where} has an input schema that is not JSON: ${(error as Error).message}`);
  }
  const options = { strict: false, allErrors: true, validateFormats: false } as const;
  const ajv = DRAFT_07.test(String(inputSchema!.$schema ?? ""))
    ? new Ajv(options)
    : new Ajv2020(options);
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(inputSchema!);
  } catch (error) {
    fail(`${where} has an input schema that does not compile: ${(error as Error).message}`);
  }
  const check = (input: unknown): string | null =>
    validate(input) ? null : `the input is not valid: ${errorsText(validate.errors ?? [])}`;
  return { inputSchema: inputSchema!, check };
}

function errorsText(errors: ErrorObject[]): string {
  return errors.slice(0, 5).map((error) => `${error.instancePath || "/"} ${error.message ?? ""}`)
    .join("; ");
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
