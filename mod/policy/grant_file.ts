/**
 * One grant file, `grants/<id>.toml` (docs/grants.md#fields and #when-the-grant-set-is-invalid):
 * TOML into a Grant, with every loading rule checked and each problem named with its file, line and
 * field.
 */
import { createHash } from "node:crypto";
import { parse, TomlDate, TomlError } from "smol-toml";
import { z } from "zod";
import { hostPatternProblem, pathProblem } from "./forms.ts";
import { hostPortPatternProblem, methodProblem, pathPatternProblem } from "./http_request.ts";
import { parseTimestamp } from "./timestamp.ts";
import { lineOfField } from "../common/mod.ts";
import {
  BUILTIN_TOOLS,
  type DataClass,
  HTTP_REQUEST_TOOL,
  isGurtGrantTool,
  type Mode,
  WORKDIR_TOOL,
} from "./types.ts";

/** One problem with one grant file; `line` is null where no line can be named. */
export type GrantProblem = { file: string; line: number | null; problem: string };

/** A grant as loaded: its fields, its id (the file stem) and the sha256 hex of the file bytes. */
export type Grant = {
  readonly id: string;
  readonly file: string;
  readonly sha256: string;
  readonly tool: string;
  readonly mode: Mode;
  readonly maxTaint: DataClass;
  readonly resultClass: DataClass;
  readonly untrusted: boolean;
  /** When the grant stops applying, or null for never. */
  readonly expires: Date | null;
  /** The paths; for http.request, path patterns (docs/grants.md#httprequest). */
  readonly paths: readonly string[];
  /** The host patterns; for http.request each may end in `:PORT`. */
  readonly hosts: readonly string[];
  /** An http.request grant's methods; empty means any method. Absent for every other tool. */
  readonly methods?: readonly string[];
  /** A `task.workdir` grant's `include_env_files`: the folder's `.env*` files are shown (else covered). */
  readonly includeEnvFiles?: true;
};

/** What loading needs to know beyond the file: the app tools that grants may name. */
export type GrantOptions = { appTools: ReadonlySet<string> };

/** One file's outcome. */
export type GrantParse = { ok: true; grant: Grant } | { ok: false; problems: GrantProblem[] };

const dataClass = z.enum(["public", "private", "secret"]);

const grantSchema = z.strictObject({
  tool: z.string(),
  mode: z.enum(["auto", "ask", "deny"]),
  max_taint: dataClass,
  result_class: dataClass,
  untrusted: z.boolean().default(false),
  expires: z.union([z.string(), z.instanceof(TomlDate)]).optional(),
  secret: z.string().optional(),
  include_env_files: z.boolean().optional(),
  constraints: z.strictObject({
    paths: z.array(z.string()).default([]),
    hosts: z.array(z.string()).default([]),
    patterns: z.array(z.string()).default([]),
    methods: z.array(z.string()).default([]),
  }).prefault({}),
});

/** The shape of a grant id, the file's stem. */
export const GRANT_ID = /^[a-z0-9-]{1,64}$/;

type Need = "required" | "optional" | "empty";

/** Loading rule 6: which constraints each of gurt's tools takes. App tools take none. */
const CONSTRAINTS: Record<string, { paths: Need; hosts: Need; methods: Need }> = {
  read_file: { paths: "required", hosts: "empty", methods: "empty" },
  write_file: { paths: "required", hosts: "empty", methods: "empty" },
  shell: { paths: "optional", hosts: "empty", methods: "empty" },
  http_fetch: { paths: "empty", hosts: "required", methods: "empty" },
  [WORKDIR_TOOL]: { paths: "required", hosts: "empty", methods: "empty" },
  [HTTP_REQUEST_TOOL]: { paths: "optional", hosts: "required", methods: "optional" },
};

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Parses one grant file: its name as it should appear in problems, and its bytes or text. */
export function parseGrant(
  grant: { file: string; content: Uint8Array | string },
  options: GrantOptions,
): GrantParse {
  const { file, content } = grant;
  const bytes = typeof content === "string" ? encoder.encode(content) : content;
  const at = (line: number | null, problem: string): GrantProblem => ({ file, line, problem });
  const problems: GrantProblem[] = [];
  const base = file.slice(file.lastIndexOf("/") + 1);
  const id = base.endsWith(".toml") ? base.slice(0, -".toml".length) : base;
  if (!GRANT_ID.test(id)) {
    problems.push(at(
      null,
      `the file name ${JSON.stringify(base)} is not a grant id: it must be 1 to 64 characters ` +
        "of a-z, 0-9 and - followed by .toml",
    ));
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, problems: [...problems, at(null, "the file is not valid UTF-8")] };
  }
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const first = error.message.split("\n")[0];
    return { ok: false, problems: [...problems, at(error.line, `not valid TOML: ${first}`)] };
  }
  const shape = grantSchema.safeParse(raw, { reportInput: true });
  if (!shape.success) {
    const described = shape.error.issues.flatMap(describeIssues);
    // A field that a near miss stands for is not also said to be missing: the misspelling is.
    const meant = new Set(described.flatMap((d) => d.meant === undefined ? [] : [d.meant]));
    for (const { field, problem } of described) {
      if (problem === "is required" && meant.has(field.map(String).join("."))) continue;
      problems.push(at(lineOfField(text, field), `${field.map(String).join(".")}: ${problem}`));
    }
    return { ok: false, problems };
  }
  const data = shape.data;
  const line = (...field: string[]): number | null => lineOfField(text, field);

  let expires: Date | null = null;
  if (data.expires !== undefined) {
    expires = expiryOf(data.expires);
    if (expires === null) {
      problems.push(at(
        line("expires"),
        'expires: must be a timestamp with a zone, such as "2027-01-01T00:00:00.000Z"',
      ));
    }
  }
  problems.push(...ruleProblems(data, options, line).map(([where, problem]) => at(where, problem)));
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    grant: {
      id,
      file,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      tool: data.tool,
      mode: data.mode,
      maxTaint: data.max_taint,
      resultClass: data.result_class,
      untrusted: data.untrusted,
      expires,
      paths: Object.freeze([...data.constraints.paths]),
      hosts: Object.freeze([...data.constraints.hosts]),
      ...(data.tool === HTTP_REQUEST_TOOL
        ? { methods: Object.freeze([...data.constraints.methods]) }
        : {}),
      ...(data.include_env_files === true ? { includeEnvFiles: true as const } : {}),
    },
  };
}

type GrantData = z.infer<typeof grantSchema>;

/**
 * Whether `tool` is a tool of an app that is not installed (`<app>.<verb>`, and no tool of `<app>`
 * is known): its grant is kept but matches nothing until such an app offers the tool, so that
 * removing an app does not make every grant file invalid. `gurt grants check` lists each one
 * (dormantGrants). A tool name of an installed app that it does not offer stays an error: most
 * likely a mistyped name.
 */
export function isDormant(tool: string, appTools: ReadonlySet<string>): boolean {
  const match = /^([a-z][a-z0-9-]{0,31})\.[a-z][a-z0-9_]{0,63}$/.exec(tool);
  if (match === null || match[1] === "example") return false;
  const prefix = `${match[1]}.`;
  for (const known of appTools) if (known.startsWith(prefix)) return false;
  return true;
}

/** The grants of `grants` whose tool is a tool of an app that is not installed. */
export function dormantGrants(
  grants: readonly Grant[],
  appTools: ReadonlySet<string>,
): { file: string; tool: string }[] {
  return grants.filter((grant) => !isGurtGrantTool(grant.tool) && !appTools.has(grant.tool))
    .map((grant) => ({ file: grant.file, tool: grant.tool }));
}

/** Loading rules 3 to 9 on a grant that has the right shape: each problem with its line. */
function ruleProblems(
  data: GrantData,
  options: GrantOptions,
  line: (...field: string[]) => number | null,
): [number | null, string][] {
  const found: [number | null, string][] = [];
  const builtin = isGurtGrantTool(data.tool);
  if (data.include_env_files !== undefined && data.tool !== WORKDIR_TOOL) {
    found.push([
      line("include_env_files"),
      `include_env_files: only a ${WORKDIR_TOOL} grant takes include_env_files`,
    ]);
  }
  if (!builtin && !options.appTools.has(data.tool) && !isDormant(data.tool, options.appTools)) {
    const apps = [...options.appTools].sort();
    const names = [...BUILTIN_TOOLS, WORKDIR_TOOL, HTTP_REQUEST_TOOL, ...apps].join(", ");
    found.push([
      line("tool"),
      `tool: ${JSON.stringify(data.tool)} is not a tool gurt knows; it must be one of ${names}`,
    ]);
  }
  if (data.secret !== undefined) {
    found.push([
      line("secret"),
      "secret: secrets are not supported in grants; an app tool declares the vault keys it uses",
    ]);
  }
  const { paths, hosts, patterns, methods } = data.constraints;
  if (patterns.length > 0) {
    found.push(
      [line("constraints", "patterns"), "constraints.patterns: patterns are not supported"],
    );
  }
  // A tool gurt does not know was reported above (or is a removed app's); its constraints cannot
  // be judged.
  const known = builtin || options.appTools.has(data.tool);
  const needs = CONSTRAINTS[data.tool] ?? { paths: "empty", hosts: "empty", methods: "empty" };
  const takes = builtin ? data.tool : `the app tool ${data.tool}`;
  const fields = [["paths", paths], ["hosts", hosts], ["methods", methods]] as const;
  for (const [field, values] of fields) {
    const need = needs[field];
    if (!known) break;
    if (need === "required" && values.length === 0) {
      found.push([
        line("constraints", field) ?? line("tool"),
        `constraints.${field}: ${takes} requires at least one entry in constraints.${field}`,
      ]);
    } else if (need === "empty" && values.length > 0) {
      found.push([
        line("constraints", field),
        `constraints.${field}: ${takes} does not take ${field}; it must be empty`,
      ]);
    }
  }
  if (data.tool === HTTP_REQUEST_TOOL) {
    found.push(...httpRequestProblems(data.constraints, line));
    return [...found, ...denyTaintProblems(data, line)];
  }
  for (const path of paths) {
    const problem = path === "/"
      ? "a grant of the whole file system is not supported"
      : pathProblem(path);
    if (problem !== null) {
      found.push([
        line("constraints", "paths"),
        `constraints.paths: ${JSON.stringify(path)}${
          path === "/" ? ":" : " is not valid: it"
        } ${problem}`,
      ]);
    }
  }
  for (const host of hosts) {
    const problem = hostPatternProblem(host);
    if (problem !== null) {
      found.push([
        line("constraints", "hosts"),
        `constraints.hosts: ${JSON.stringify(host)} is not a valid host pattern: it ${problem}`,
      ]);
    }
  }
  return [...found, ...denyTaintProblems(data, line)];
}

function denyTaintProblems(
  data: GrantData,
  line: (...field: string[]) => number | null,
): [number | null, string][] {
  if (data.mode !== "deny" || data.max_taint === "secret") return [];
  return [[
    line("max_taint") ?? line("mode"),
    'max_taint: a deny grant must apply at every taint; set max_taint = "secret"',
  ]];
}

/** An http.request grant's hosts (`:PORT` allowed), methods and path patterns, each checked. */
function httpRequestProblems(
  constraints: GrantData["constraints"],
  line: (...field: string[]) => number | null,
): [number | null, string][] {
  const checks = [
    ["hosts", hostPortPatternProblem, "a valid host pattern"],
    ["methods", methodProblem, "a valid method"],
    ["paths", pathPatternProblem, "a valid path pattern"],
  ] as const;
  const found: [number | null, string][] = [];
  for (const [field, problemOf, what] of checks) {
    for (const value of constraints[field]) {
      const problem = problemOf(value);
      if (problem === null) continue;
      found.push([
        line("constraints", field),
        `constraints.${field}: ${JSON.stringify(value)} is not ${what}: it ${problem}`,
      ]);
    }
  }
  return found;
}

function expiryOf(value: string | TomlDate): Date | null {
  if (typeof value === "string") return parseTimestamp(value);
  // An unquoted TOML date-time is accepted only with its zone: a local time means nothing here.
  if (!value.isDateTime() || value.isLocal()) return null;
  return new Date(value.getTime());
}

/** One issue as a field and a problem; a near-miss unknown field names the field it `meant`. */
type Described = { field: (string | number)[]; problem: string; meant?: string };

/** Each problem of one issue: an unknown-keys issue gives one for each key. */
function describeIssues(issue: z.core.$ZodIssue): Described[] {
  const field = issue.path.filter((part) => typeof part !== "symbol");
  if (issue.code === "unrecognized_keys") {
    const known = knownFields(field);
    return issue.keys.map((key) => {
      const near = nearestField(key, known);
      if (near === null) return { field: [...field, key], problem: "unknown field" };
      return {
        field: [...field, key],
        problem: `unknown field; did you mean ${near}?`,
        meant: [...field, near].map(String).join("."),
      };
    });
  }
  if (issue.input === undefined) return [{ field, problem: "is required" }];
  switch (issue.code) {
    case "invalid_type":
      return [{ field, problem: `expected ${issue.expected}` }];
    case "invalid_value":
      return [{ field, problem: `must be one of ${issue.values.map(String).join(", ")}` }];
    default:
      return [{ field, problem: issue.message }];
  }
}

/** The fields a grant may set at `path`: the top level's or [constraints]'s. */
function knownFields(path: readonly (string | number)[]): string[] {
  const shape = path.length === 0
    ? grantSchema.shape
    : path.length === 1 && path[0] === "constraints"
    ? grantSchema.shape.constraints.unwrap().shape
    : {};
  return Object.keys(shape);
}

/**
 * The known field `key` most likely stands for: the same letters but for case, `-`, `_` and
 * spaces, or at most two letters off (one for a short key), else null.
 */
export function nearestField(key: string, known: readonly string[]): string | null {
  const bare = (name: string) => name.toLowerCase().replace(/[-_ ]/g, "");
  let best: { name: string; distance: number } | null = null;
  for (const name of known) {
    const distance = bare(name) === bare(key) ? 0 : editDistance(key.toLowerCase(), name);
    if (best === null || distance < best.distance) best = { name, distance };
  }
  const limit = key.length <= 4 ? 1 : 2;
  return best !== null && best.distance <= limit ? best.name : null;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + cost);
    }
    row = next;
  }
  return row[b.length];
}
