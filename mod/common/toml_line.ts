/** Finding the line of a TOML file a field is on, for the problems told about it. */

/**
 * The 1-based line of a TOML text that sets a field (top level or in a [table]; number parts, an
 * array's indexes, are skipped), or null: where a grant or credential file's problem is told.
 */
export function lineOfField(text: string, field: readonly (string | number)[]): number | null {
  if (field.length === 0) return null;
  const want = field.filter((part) => typeof part === "string").join(".");
  const lines = text.split("\n");
  let table = "";
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    const header = /^\[\s*([^\]]+?)\s*\]/.exec(trimmed);
    if (header) {
      table = header[1].replace(/\s+/g, "").replace(/"/g, "");
      if (table === want) return i + 1;
      continue;
    }
    const assignment = /^("[^"]*"|[A-Za-z0-9_.-]+)\s*=/.exec(trimmed);
    if (!assignment) continue;
    const key = assignment[1].replace(/"/g, "");
    if ((table === "" ? key : `${table}.${key}`) === want) return i + 1;
  }
  return null;
}
