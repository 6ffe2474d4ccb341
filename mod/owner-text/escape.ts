/**
 * Text a task wrote (a step, a question, a tool's input or answer, a reason) is shown to the owner
 * as data (docs/threat-model.md#the-owners-view): it cannot start a line of its own, cannot look
 * like one of the core's lines, and cannot hide or reorder characters.
 *
 * - Every character of Unicode's general categories Cc, Cf, Co, Cs, Cn, Zl and Zp, every
 *   default-ignorable code point, and every space separator but U+0020 becomes an escape: `\n`,
 *   `\r`, `\t`, else `\uXXXX` (four lowercase hex digits; a character past U+FFFF as its two
 *   UTF-16 halves), JSON's spelling, so escaped JSON is still JSON. The set is Unicode's own, read
 *   through the regular expression's property escapes, not a list of ranges.
 * - Past eight spaces in a row each space is `\u0020`, so invisible padding cannot push text to the
 *   start of a row that the terminal or the page wraps to.
 * - Text longer than its limit is cut, with `… [N more characters]` after it.
 */

/** The characters shown as escapes. U+0020 is the one space separator that passes. */
const HIDDEN =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]|(?! )\p{Zs}/u;

/** The escapes that read better as letters. */
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The most characters of one text shown when the caller names no limit. */
export const SHOWN_MAX = 2000;

/** The most spaces in a row shown as spaces: any after them is `\u0020`. */
const SPACE_RUN = 8;

/** How much of a text to show. */
export interface ShownOptions {
  /** The most characters shown before the cut (the escapes count as they are shown). */
  max?: number;
}

function escaped(char: string): string {
  if (char === " ") return "\\u0020";
  const named = NAMED[char];
  if (named !== undefined) return named;
  // Past U+FFFF as its two UTF-16 halves: JSON's and JavaScript's spelling of the same character.
  let out = "";
  for (let i = 0; i < char.length; i++) {
    out += `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`;
  }
  return out;
}

/** A surrogate pair: one character in two UTF-16 units. */
const PAIR = /[\ud800-\udbff][\udc00-\udfff]/g;

function countCharacters(text: string): number {
  return text.length - (text.match(PAIR)?.length ?? 0);
}

/** Every character escapeInto escapes, for a whole text at once: a space after eight is one. */
const EVERY = new RegExp(`${HIDDEN.source}|(?<= {${SPACE_RUN}}) `, "gu");

/**
 * Escapes `text` into about `budget` characters at most: the shown text and how many UTF-16 units
 * of `text` it covers.
 */
function escapeInto(text: string, budget: number): { shown: string; used: number } {
  let shown = "";
  let spaces = 0;
  let used = 0;
  for (const char of text) {
    if (shown.length >= budget) break;
    used += char.length;
    if (char === " ") {
      shown += spaces >= SPACE_RUN ? "\\u0020" : " ";
      spaces++;
      continue;
    }
    spaces = 0;
    shown += HIDDEN.test(char) ? escaped(char) : char;
  }
  return { shown, used };
}

function cutMark(text: string, used: number): string {
  return used < text.length ? `… [${countCharacters(text.slice(used))} more characters]` : "";
}

/** A text as one line of data: every hidden character escaped, newlines as `\n`, cut at `max`. */
export function shownText(text: string, options: ShownOptions = {}): string {
  const max = options.max ?? SHOWN_MAX;
  if (max === Infinity) return text.replace(EVERY, escaped);
  const { shown, used } = escapeInto(text, max);
  return shown + cutMark(text, used);
}

/** The most lines shownLines gives, whatever is left of its characters. */
export const SHOWN_LINES_MAX = 200;

/**
 * A text as lines of data, for a reader that prints each under a mark of its own: split at each
 * newline, each line escaped as shownText escapes (a carriage return is `\r`), and the whole cut at
 * `max` (each newline counts as its two characters `\n` would) or at SHOWN_LINES_MAX lines, with
 * the marker on the last line. Never fewer than one line.
 */
export function shownLines(text: string, options: ShownOptions = {}): string[] {
  let budget = options.max ?? SHOWN_MAX;
  const lines: string[] = [];
  let offset = 0;
  for (const raw of text.split("\n")) {
    if (lines.length > 0) {
      // An empty line shows no character, but it is a row of the owner's screen all the same.
      if (budget <= 0 || lines.length === SHOWN_LINES_MAX) break;
      offset += 1; // the newline before this line
    }
    const { shown, used } = escapeInto(raw, budget);
    lines.push(shown);
    budget -= shown.length + 2;
    offset += used;
    if (used < raw.length) break;
  }
  lines[lines.length - 1] += cutMark(text, offset);
  return lines;
}
