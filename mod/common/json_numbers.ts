/**
 * Numbers a JSON body holds that gurt cannot keep as sent. JSON.parse turns each number into a
 * double: `1e400` becomes Infinity (stored as null), `1e-400` becomes 0, and 2^53+1 becomes 2^53.
 * A body with such a number is refused, naming the field, rather than stored changed and
 * acknowledged. A number is kept when the double's shortest text has the same decimal value as the
 * text sent (`1.50` and `15e-1` are kept; `0.1000000000000000055511` is not, it would come back as
 * `0.1`).
 */

/** A number that would be changed: where it is (`data.x`, `input.items.3`) and its text. */
export interface InexactNumber {
  path: string;
  source: string;
}

/** The reviver's stand-in for a number that would be changed. */
class Inexact {
  constructor(readonly source: string) {}
}

/**
 * Only a number written with an exponent or with 16 digits or more can be one a double does not
 * keep; text with neither skips the slower parse that reads each number's source.
 */
const SUSPECT = /\d[eE]|\d{16}/;

/** The first number in the JSON `text` that a double cannot keep exactly, else null. */
export function inexactNumber(text: string): InexactNumber | null {
  if (!SUSPECT.test(text) || !anyInexact(text)) return null;
  let found = false;
  const marked = JSON.parse(text, (_key, value, context?: { source?: string }) => {
    if (typeof value !== "number" || context?.source === undefined) return value;
    if (keeps(context.source, value)) return value;
    found = true;
    return new Inexact(context.source);
  });
  return found ? locate(marked, []) : null;
}

/**
 * Whether any number token of the (valid) JSON `text` is one a double would change, read in one
 * pass over the text: JSON.parse with a reviver that reads each number's source costs some 30
 * times a plain parse (4.5 s for a 6 MB array of numbers, the core's one thread held), so it is
 * kept for the body that has one, to say where.
 */
function anyInexact(text: string): boolean {
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i++;
      while (i < text.length && text.charCodeAt(i) !== QUOTE) {
        i += text.charCodeAt(i) === 92 ? 2 : 1;
      }
      i++;
    } else if (c === MINUS || (c >= ZERO && c <= ZERO + 9)) {
      const start = i;
      let suspect = false;
      for (; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 101 || d === 69) suspect = true; // e, E
        else if (!((d >= ZERO && d <= ZERO + 9) || d === 46 || d === 43 || d === MINUS)) break;
      }
      if (
        (suspect || i - start >= 16) && !keeps(text.slice(start, i), Number(text.slice(start, i)))
      ) {
        return true;
      }
    } else {
      i++;
    }
  }
  return false;
}

const QUOTE = 34;
const MINUS = 45;

/** The path of the first stand-in in `value`, depth first. */
function locate(value: unknown, path: string[]): InexactNumber | null {
  if (value instanceof Inexact) return { path: path.join("."), source: value.source };
  if (value === null || typeof value !== "object") return null;
  for (const [key, member] of Object.entries(value)) {
    const at = locate(member, [...path, key]);
    if (at !== null) return at;
  }
  return null;
}

/** Whether the double `value` parsed from `source` has the decimal value `source` says. */
function keeps(source: string, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const sent = decimal(source);
  const kept = decimal(String(value));
  if (sent === null || kept === null) return false;
  if (sent.digits === "" || kept.digits === "") return sent.digits === kept.digits; // zero: sign aside
  return sent.negative === kept.negative && sent.digits === kept.digits &&
    sent.exponent === kept.exponent;
}

const ZERO = 48; // "0"

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A decimal as significant digits (no leading or trailing zeros) times ten to `exponent`. */
function decimal(text: string): { negative: boolean; digits: string; exponent: number } | null {
  const match = NUMBER.exec(text);
  if (match === null) return null;
  const [, sign, whole, fraction = "", power = "0"] = match;
  const all = `${whole}${fraction}`;
  // Trimmed by index, not by /0+$/: that regex tries every run of zeros to its end, so a number
  // of 60,000 digits with zeros inside took seconds of the core's one thread.
  let start = 0;
  while (start < all.length && all.charCodeAt(start) === ZERO) start++;
  let end = all.length;
  while (end > start && all.charCodeAt(end - 1) === ZERO) end--;
  const exponent = Number(power) - fraction.length + (all.length - end);
  return { negative: sign === "-", digits: all.slice(start, end), exponent };
}

/** The 400's sentence for a number that would be changed. */
export function inexactNumberText(found: InexactNumber): string {
  const where = found.path === "" ? "the body" : found.path;
  const shown = found.source.length > 40 ? `${found.source.slice(0, 40)}…` : found.source;
  return `${where}: the number ${shown} cannot be kept exactly (gurt keeps a number as a double: ` +
    "at most 17 significant digits, integers exact up to 2^53, magnitudes from about 5e-324 " +
    "to 1.8e308); send it as a string";
}
