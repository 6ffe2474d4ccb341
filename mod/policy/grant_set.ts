/**
 * A set of grants (docs/grants.md#when-the-grant-set-is-invalid): built from every file of the
 * grants directory, and invalid as a whole if any one file is, so that a mistyped deny grant can
 * never be skipped.
 */
import {
  type Grant,
  type GrantOptions,
  type GrantParse,
  type GrantProblem,
  parseGrant,
} from "./grant_file.ts";

/** The owner's grants, valid as a whole, sorted by id and grouped by tool. */
export type GrantSet = {
  readonly grants: readonly Grant[];
  readonly byTool: ReadonlyMap<string, readonly Grant[]>;
};

/** The outcome of loading: a valid set, or every problem found. */
export type GrantLoad = { ok: true; grants: GrantSet } | { ok: false; problems: GrantProblem[] };

/** One file of the grants directory: its path (as problems should name it) and its bytes. */
export type GrantFile = { file: string; bytes: Uint8Array };

/**
 * Builds the set from the `.toml` files of a grants directory; any problem invalidates it. `parse`
 * parses one file (parseGrant with the app tools by default; a loader may remember earlier parses).
 */
export function buildGrantSet(
  files: readonly GrantFile[],
  options: GrantOptions & { parse?: (file: string, bytes: Uint8Array) => GrantParse },
): GrantLoad {
  const parse = options.parse ??
    ((file: string, bytes: Uint8Array) =>
      parseGrant({ file, content: bytes }, { appTools: options.appTools }));
  const grants: Grant[] = [];
  const problems: GrantProblem[] = [];
  for (const { file, bytes } of files) {
    const parsed = parse(file, bytes);
    if (parsed.ok) grants.push(parsed.grant);
    else problems.push(...parsed.problems);
  }
  if (problems.length > 0) return { ok: false, problems };
  grants.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const byTool = new Map<string, Grant[]>();
  for (const grant of grants) {
    const list = byTool.get(grant.tool);
    if (list === undefined) byTool.set(grant.tool, [grant]);
    else list.push(grant);
  }
  return { ok: true, grants: { grants, byTool } };
}

/** The problems as `gurt grants check` prints them: `<file>:<line>: <problem>`, one a line. */
export function formatProblems(problems: readonly GrantProblem[]): string[] {
  return problems.map((p) => `${p.line === null ? p.file : `${p.file}:${p.line}`}: ${p.problem}`);
}

/**
 * The report the core prints (once per distinct set of problems) and `gurt grants check` prints:
 * each problem on its own line, then the runbook pointer.
 */
export function grantsInvalidReport(problems: readonly GrantProblem[]): string {
  return [
    ...formatProblems(problems),
    "grants: the grant files are invalid, so every call is denied with grants_invalid; " +
    "see runbook.md#grants-invalid",
  ].join("\n");
}

/**
 * Remembers the last set of problems reported, so that the core prints each problem once per
 * distinct set: `next` returns the report for a new set, and null for the same set again or for a
 * valid load (which also forgets, so a set that comes back is reported again).
 */
export class GrantsInvalidReporter {
  #last: string | null = null;

  /** The report to print for this load, or null when there is nothing new to say. */
  next(load: GrantLoad): string | null {
    if (load.ok) {
      this.#last = null;
      return null;
    }
    const report = grantsInvalidReport(load.problems);
    if (report === this.#last) return null;
    this.#last = report;
    return report;
  }
}
