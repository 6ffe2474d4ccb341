/**
 * Reading an agent's output when it prints one JSON object a line (Claude Code's `--output-format
 * json`, Codex's `exec --json`, Droid's `stream-json`, OpenCode's `--format json`): what the four
 * adapters share. A line that is not one JSON object (a progress message, a blank line) is null.
 */

/** The JSON object of one line of an agent's output, else null. */
export function objectOf(line: string): Record<string, unknown> | null {
  const text = line.trim();
  if (!text.startsWith("{")) return null;
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** The JSON object of each line of an agent's output, in order: null for a line that holds none. */
export function objectsOf(stdout: string): (Record<string, unknown> | null)[] {
  return stdout.split("\n").map(objectOf);
}

/** A value that is a string with something in it (a session id, say), else null. */
export function nonEmptyString(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** A value that is a string (an answer, a message: empty or not), else null. */
export function textOf(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}
