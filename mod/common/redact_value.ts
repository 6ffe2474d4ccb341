/** Applies a text redactor to every string inside a JSON value, keys included. */

/** A copy of `value` with `redact` applied to every string in it. */
export function redactValue(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, redact));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[redact(key)] = redactValue(item, redact);
    return out;
  }
  return value;
}
