/**
 * The grant paths that do not exist on this box, for `gurt grants check`: found by the command
 * line itself (the CLI role may not look at the owner's files), from each grant file's
 * `constraints.paths` as written. A file that does not parse has nothing to say here: the check
 * reports it.
 */
import { parse } from "smol-toml";

/** A path a grant names that is not on the box. */
export interface MissingGrantPath {
  file: string;
  line: number | null;
  path: string;
}

/** Every `constraints.paths` entry of `<dir>/*.toml` that does not exist (a stat says NotFound). */
export function missingGrantPaths(dir: string): MissingGrantPath[] {
  const found: MissingGrantPath[] = [];
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir)].filter((e) => e.isFile && e.name.endsWith(".toml"))
      .map((e) => e.name).sort();
  } catch {
    return [];
  }
  for (const name of names) {
    const file = `${dir}/${name}`;
    let text: string;
    let paths: unknown;
    try {
      text = Deno.readTextFileSync(file);
      paths = (parse(text).constraints as { paths?: unknown } | undefined)?.paths;
    } catch {
      continue;
    }
    if (!Array.isArray(paths)) continue;
    for (const path of paths) {
      if (typeof path !== "string" || !path.startsWith("/") || exists(path)) continue;
      const index = text.split("\n").findIndex((line) => line.includes(path));
      found.push({ file, line: index === -1 ? null : index + 1, path });
    }
  }
  return found;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (error) {
    // Only a path known not to be there is reported: one that cannot be looked at may be.
    return !(error instanceof Deno.errors.NotFound);
  }
}
