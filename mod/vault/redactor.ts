/**
 * The backstop (docs/threat-model.md#secrets): every form of every vault value whose name ends in
 * KEY, TOKEN, SECRET, PASSWORD or ACCESS and that is 8 characters or more becomes `[a vault key]`.
 * Matching is leftmost-longest over all forms at once, so the result does not depend on the order
 * of keys.
 */
import { formsOf } from "./encodings.ts";
import { isRedactedName, MIN_REDACTED_LENGTH } from "./names.ts";

/** What a vault value is replaced by. */
export const REDACTED = "[a vault key]";

/** Replaces a fixed set of secret forms in text. Immutable: a changed vault builds a new one. */
export class Redactor {
  readonly #pattern: RegExp | null;
  readonly #forms: string[];
  /** The first character of every form, to pass quickly over where none can start. */
  readonly #starts: Set<number>;
  /** The length of the longest form: a streamed text must keep this much minus one back. */
  readonly longest: number;

  private constructor(forms: string[]) {
    this.#forms = forms;
    this.#starts = new Set(forms.map((form) => form.charCodeAt(0)));
    this.longest = forms.reduce((max, form) => Math.max(max, form.length), 0);
    this.#pattern = forms.length === 0 ? null : new RegExp(forms.map(escapeRegExp).join("|"), "g");
  }

  /** The redactor for these vault entries: only redacted names with values of 8 characters or more. */
  static forEntries(entries: Iterable<readonly [string, string]>): Redactor {
    const values: string[] = [];
    for (const [name, value] of entries) {
      if (isRedactedName(name) && value.length >= MIN_REDACTED_LENGTH) values.push(value);
    }
    return Redactor.forValues(values);
  }

  /** The redactor for these secret values, whatever their names. */
  static forValues(values: Iterable<string>): Redactor {
    const forms = new Set<string>();
    for (const value of values) for (const form of formsOf(value)) forms.add(form);
    return new Redactor([...forms].sort((a, b) => b.length - a.length || (a < b ? -1 : 1)));
  }

  /** `text` with every form of every secret replaced. */
  redact(text: string): string {
    if (this.#pattern === null) return text;
    return text.replace(this.#pattern, REDACTED);
  }

  /**
   * The matches of the secret forms in `text`, leftmost-longest, as [start, end) pairs. The
   * streaming redactor uses them to cut a text where no secret can straddle the cut.
   */
  matches(text: string): [number, number][] {
    if (this.#pattern === null) return [];
    const out: [number, number][] = [];
    for (const match of text.matchAll(this.#pattern)) {
      out.push([match.index, match.index + match[0].length]);
    }
    return out;
  }

  /**
   * Where a stream must start holding `text` back, looking no earlier than `from`: the first index
   * from which the rest of `text` is the start of some form but not that whole form, so that more
   * text could still make it a match (or a longer one). `text.length` when nothing need be held.
   */
  heldFrom(text: string, from: number): number {
    for (let at = Math.max(from, text.length - this.longest + 1); at < text.length; at++) {
      if (!this.#starts.has(text.charCodeAt(at))) continue;
      const rest = text.length - at;
      for (const form of this.#forms) {
        if (form.length > rest && startsWithAt(form, text, at)) return at;
      }
    }
    return text.length;
  }
}

/** Whether `form` starts with `text` from `at` to its end; compares from the first character. */
function startsWithAt(form: string, text: string, at: number): boolean {
  for (let i = at; i < text.length; i++) {
    if (form.charCodeAt(i - at) !== text.charCodeAt(i)) return false;
  }
  return true;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\\/-]/g, "\\$&");
}
