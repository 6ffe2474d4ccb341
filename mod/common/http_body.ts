/** Reading a request body: size caps, UTF-8, JSON, and the route's zod schema, with clear errors. */
import type { z } from "zod";
import { readRequestBody } from "../net/mod.ts";
import { HttpError } from "./http_error.ts";
import { inexactNumber, inexactNumberText } from "./json_numbers.ts";

/** Reads at most `limit` bytes of the body; more is a 413 that names the limit. */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  try {
    return await readRequestBody(request, { limit, tooLarge: () => tooLarge(limit) });
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(400, `the body could not be read to its end: ${(error as Error).message}`);
  }
}

/** A strict UTF-8 decoder; it keeps no state between whole (not streamed) decodes. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes, parses and validates a JSON body; every failure is a 400 that says what was wrong. */
export function parseJsonBody<T>(bytes: Uint8Array, schema: z.ZodType<T>): T {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpError(400, "the body is not valid UTF-8");
  }
  const depth = nestingDepth(text);
  if (depth > MAX_DEPTH) {
    throw new HttpError(
      400,
      `the body is nested ${depth} levels deep; gurt takes at most ${MAX_DEPTH} levels of arrays and objects`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `the body is not valid JSON: ${(error as Error).message}`);
  }
  // A number a double cannot keep (1e400, 1e-400, 2^53+1) is refused, never stored changed.
  const inexact = inexactNumber(text);
  if (inexact !== null) throw new HttpError(400, inexactNumberText(inexact));
  // With the input in each issue: a field left out is one whose input is undefined.
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  // A required field left out whose schema says so in a sentence of its own ("a key is required")
  // is answered with that sentence alone, and only when nothing else in the body is wrong.
  const issue = issues.find((one) => !saidAlone(one)) ?? issues[0];
  if (saidAlone(issue)) throw new HttpError(400, issue.message);
  const where = issue.path.length === 0 ? "the body" : issue.path.join(".");
  const what = issue.code === "unrecognized_keys"
    ? `unknown field ${JSON.stringify(issue.keys[0])}`
    : issue.message;
  throw new HttpError(400, `${where}: ${what}`);
}

/**
 * Whether `issue` is a field left out that its schema words itself: zod's own words for a missing
 * field begin "Invalid input", a schema's error function replaces them.
 */
function saidAlone(issue: z.core.$ZodIssue): boolean {
  return issue.code === "invalid_type" && issue.input === undefined && issue.path.length > 0 &&
    !issue.message.startsWith("Invalid input");
}

/**
 * The deepest nesting of arrays and objects a body may have. Deeper values would overflow the
 * stack of the recursive steps that follow (canonical JSON, redaction, the journal's stringify).
 */
export const MAX_DEPTH = 128;

/** How deeply brackets nest in JSON text, counting only those outside strings. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `the body is larger than ${limit} bytes`);
}

/** Like parseJsonBody, for a body that may be left out: an empty body gives undefined. */
export function parseOptionalJsonBody<T>(bytes: Uint8Array, schema: z.ZodType<T>): T | undefined {
  return bytes.length === 0 ? undefined : parseJsonBody(bytes, schema);
}
