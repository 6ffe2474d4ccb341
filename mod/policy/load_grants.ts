/**
 * Reads the grants directory, every file every time (seed 002 §3): there is no cache, so a change
 * applies to the next decision. A missing or unreadable directory makes the set invalid.
 */
import type { GrantOptions, GrantProblem } from "./grant_file.ts";
import { buildGrantSet, type GrantFile, type GrantLoad } from "./grant_set.ts";

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
  const built = buildGrantSet(files, options);
  if (problems.length === 0) return built;
  const all = built.ok ? problems : [...problems, ...built.problems];
  all.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { ok: false, problems: all };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
