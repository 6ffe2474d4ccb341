/**
 * Reads the grants directory, every file every time (docs/grants.md#where-grants-live): there is no
 * cache, so a change applies to the next decision. A missing or unreadable directory makes the set
 * invalid.
 *
 * What is remembered is only the parse of bytes already read: a file whose bytes (and the app tools
 * it is checked against) are exactly those of the last load gives the same grant without being
 * parsed and hashed again. No stat, time or size decides it, so any change, even within the same
 * second at the same size, is parsed afresh at the next decision.
 */
import { type GrantOptions, type GrantParse, type GrantProblem, parseGrant } from "./grant_file.ts";
import { buildGrantSet, type GrantFile, type GrantLoad } from "./grant_set.ts";

/** A file's bytes at the last load, the app tools they were checked against, and their parse. */
type Parsed = { bytes: Uint8Array; appTools: ReadonlySet<string>; parse: GrantParse };

/** The parses of the last load, by directory then file; only the files of that load are kept. */
const lastParses = new Map<string, Map<string, Parsed>>();
/** How many directories' parses are kept (a core reads one; tests make many). */
const MAX_DIRS = 8;

/** Loads `<dir>/*.toml` into a GrantSet, or every problem with the files, lines and fields. */
// deno-lint-ignore require-await
export async function loadGrants(dir: string, options: GrantOptions): Promise<GrantLoad> {
  const names: string[] = [];
  try {
    // Synchronous reads: the grants directory is read at every decision, and its few small files
    // are in the page cache; each async operation would cost a trip through Deno's blocking pool.
    for (const entry of Deno.readDirSync(dir)) {
      if (entry.name.endsWith(".toml")) names.push(entry.name);
    }
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "the grants directory does not exist"
      : `the grants directory cannot be read: ${describe(error)}`;
    return { ok: false, problems: [{ file: dir, line: null, problem: why }] };
  }
  names.sort();
  const problems: GrantProblem[] = [];
  const read = names.map((name): GrantFile | null => {
    const file = `${dir}/${name}`;
    try {
      return { file, bytes: Deno.readFileSync(file) };
    } catch (error) {
      problems.push({ file, line: null, problem: `the file cannot be read: ${describe(error)}` });
      return null;
    }
  });
  const files = read.filter((entry): entry is GrantFile => entry !== null);
  const before = lastParses.get(dir);
  const now = new Map<string, Parsed>();
  const built = buildGrantSet(files, {
    appTools: options.appTools,
    parse(file: string, bytes: Uint8Array): GrantParse {
      const known = before?.get(file);
      if (
        known !== undefined && sameBytes(known.bytes, bytes) &&
        sameSet(known.appTools, options.appTools)
      ) {
        now.set(file, known);
        return known.parse;
      }
      const parse = parseGrant({ file, content: bytes }, options);
      if (parse.ok) Object.freeze(parse.grant);
      now.set(file, { bytes, appTools: new Set(options.appTools), parse });
      return parse;
    },
  });
  lastParses.delete(dir);
  lastParses.set(dir, now);
  if (lastParses.size > MAX_DIRS) lastParses.delete(lastParses.keys().next().value!);
  if (problems.length === 0) return built;
  const all = built.ok ? problems : [...problems, ...built.problems];
  all.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { ok: false, problems: all };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const item of a) if (!b.has(item)) return false;
  return true;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
