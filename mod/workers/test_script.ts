/**
 * The test worker's script: one broker request per line, `METHOD PATH [JSON]`, such as
 * `POST /call {"tool":"example.echo","input":{"text":"hi"}}`. A /call or /ask without a key gets
 * `line-<n>`. Blank lines and lines starting with # do nothing. `SLEEP <ms>` waits.
 */

/** One line of a script. */
export type ScriptLine =
  | { line: number; kind: "request"; method: "GET" | "POST"; path: string; body?: unknown }
  | { line: number; kind: "sleep"; ms: number }
  | { line: number; kind: "nothing" };

/** Parses a script; a bad line is an error naming its number. */
export function parseScript(text: string): ScriptLine[] {
  return text.split("\n").map((raw, index) => parseLine(raw.trim(), index + 1));
}

function parseLine(text: string, line: number): ScriptLine {
  if (text === "" || text.startsWith("#")) return { line, kind: "nothing" };
  const sleep = /^SLEEP\s+(\d{1,7})$/.exec(text);
  if (sleep) return { line, kind: "sleep", ms: Number(sleep[1]) };
  const request = /^(GET|POST)\s+(\/[a-z]+)(?:\s+(.*))?$/.exec(text);
  if (!request) throw new Error(`script line ${line}: expected METHOD PATH [JSON], got ${text}`);
  const method = request[1] as "GET" | "POST";
  if (request[3] === undefined) return { line, kind: "request", method, path: request[2] };
  let body: unknown;
  try {
    body = JSON.parse(request[3]);
  } catch (error) {
    throw new Error(`script line ${line}: the body is not JSON: ${(error as Error).message}`);
  }
  if ((request[2] === "/call" || request[2] === "/ask") && isObject(body) && !("key" in body)) {
    body = { ...body, key: `line-${line}` };
  }
  return { line, kind: "request", method, path: request[2], body };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
