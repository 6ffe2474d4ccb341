/** Reading gurt.toml: smol-toml for the syntax, the strict schema for the keys. */
import { parse, TomlError } from "smol-toml";
import type { z } from "zod";
import { configSchema, type FileConfig, RETIRED_KEYS } from "./schema.ts";

/**
 * A gurt.toml (or another strict TOML file, such as an app's app.toml) that cannot be used: names
 * the file, the line where known, and the key. `pointer` is the runbook entry the message ends
 * with, written out (`see runbook.md#config-invalid` unless given).
 */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly key: string | undefined,
    readonly problem: string,
    pointer = "see runbook.md#config-invalid",
  ) {
    const where = line === undefined ? file : `${file}:${line}`;
    const which = key === undefined ? "" : ` ${key}:`;
    // A problem with a runbook entry of its own (a retired key) already ends with its pointer.
    const ending = / see runbook\.md#[a-z0-9-]+$/.test(problem) ? "" : `; ${pointer}`;
    super(`${where}:${which} ${problem}${ending}`);
    this.name = "ConfigError";
  }
}

/** How parseStrictToml reads a file: its schema, and the runbook entry its errors point to. */
export interface StrictTomlOptions<T> {
  /** A strict zod schema: it decides every key, and its first issue becomes the error. */
  schema: z.ZodType<T>;
  /** Written out, such as `see runbook.md#app-manifest-invalid`; config-invalid's by default. */
  pointer?: string;
}

/** Parses the text of a gurt.toml into a FileConfig, or throws a ConfigError naming the key. */
export function parseConfig(file: string, text: string): FileConfig {
  const raw = parseToml(file, text, undefined);
  const retired = retiredKey(raw);
  if (retired !== null) {
    const key = retired.join(".");
    throw new ConfigError(file, lineOfValue(text, retired), key, RETIRED_KEYS[key]);
  }
  const result = configSchema.safeParse(raw);
  if (result.success) return result.data;
  throw issueToError(file, text, result.error.issues[0], undefined);
}

/**
 * Parses a strict TOML file with `options.schema`, as gurt.toml is parsed: a syntax error, an
 * unknown key or a bad value throws a ConfigError with the file, the line and the dotted key.
 */
export function parseStrictToml<T>(file: string, text: string, options: StrictTomlOptions<T>): T {
  const raw = parseToml(file, text, options.pointer);
  const result = options.schema.safeParse(raw);
  if (result.success) return result.data;
  throw issueToError(file, text, result.error.issues[0], options.pointer);
}

function parseToml(
  file: string,
  text: string,
  pointer: string | undefined,
): Record<string, unknown> {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof TomlError) {
      const first = error.message.split("\n")[0];
      throw new ConfigError(file, error.line, undefined, `not valid TOML: ${first}`, pointer);
    }
    throw error;
  }
}

/** The first key of RETIRED_KEYS that `raw` sets, as a path; null when it sets none. */
function retiredKey(raw: Record<string, unknown>): string[] | null {
  for (const dotted of Object.keys(RETIRED_KEYS)) {
    const [table, key] = dotted.split(".");
    const value = raw[table];
    if (typeof value === "object" && value !== null && Object.hasOwn(value, key)) {
      return [table, key];
    }
  }
  return null;
}

function issueToError(
  file: string,
  text: string,
  issue: z.core.$ZodIssue,
  pointer: string | undefined,
): ConfigError {
  let path = issue.path.map(String);
  let problem = issue.message;
  if (issue.code === "unrecognized_keys") {
    path = [...path, issue.keys[0]];
    problem = "unknown key";
  } else if (issue.code === "invalid_type") {
    problem = `expected ${issue.expected}`;
  } else if (issue.code === "invalid_key" && issue.issues.length > 0) {
    problem = issue.issues[0].message;
  }
  const key = path.join(".");
  return new ConfigError(file, lineOfValue(text, path), key, problem, pointer);
}

/** The 1-based line of gurt.toml's `text` that sets a dotted field, else the nearest above it. */
export function lineOfField(text: string, field: string): number | undefined {
  return lineOfValue(text, field.split("."));
}

/**
 * The line of a key, else of the nearest key above it (an array's element or an inline table's
 * key is on the line of the array or the table).
 */
function lineOfValue(text: string, path: string[]): number | undefined {
  for (let length = path.length; length > 0; length--) {
    const line = lineOfKey(text, path.slice(0, length));
    if (line !== undefined) return line;
  }
  return undefined;
}

/** Finds the 1-based line that sets a dotted key, by tracking [table] headers. */
function lineOfKey(text: string, path: string[]): number | undefined {
  const lines = text.split("\n");
  let table: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const header = /^\[\s*([^\]]+?)\s*\]/.exec(line);
    if (header) {
      // A quoted part may hold dots: [models.prices."gpt-4.1"].
      table = (header[1].match(/"[^"]*"|[^."]+/g) ?? []).map((part) =>
        part.trim().replace(/^"|"$/g, "")
      ).filter((part) => part !== "");
      if (sameKey(table, path)) return i + 1;
      continue;
    }
    const assignment = /^("[^"]*"|[A-Za-z0-9_-]+)\s*=/.exec(line);
    if (!assignment) continue;
    const key = assignment[1].replace(/^"|"$/g, "");
    if (sameKey([...table, key], path)) return i + 1;
  }
  return undefined;
}

function sameKey(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}
