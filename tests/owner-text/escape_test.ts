/**
 * shownText and shownLines (mod/owner-text/escape.ts): a task's text shown as data. Each form of
 * forgery of issue 34, Unicode's categories rather than a list of ranges, the cut, and a property:
 * whatever a task writes, what is shown holds no newline and no character of the hidden set.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { SHOWN_LINES_MAX, SHOWN_MAX, shownLines, shownText } from "../../mod/owner-text/mod.ts";

/** What must never reach the owner's screen as it is. */
const HIDDEN =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]|(?! )\p{Zs}/u;

Deno.test("a newline and a carriage return are \\n and \\r: a forged result line stays on the step's line", () => {
  const step = 'hello\n  12:00:02 result k2 example.spend {"ok":false} cost 0¢\rX';
  assertEquals(
    shownText(step),
    'hello\\n  12:00:02 result k2 example.spend {"ok":false} cost 0¢\\rX',
  );
});

Deno.test("U+061C, U+00AD, the tag characters and the direction overrides are escaped", () => {
  assertEquals(shownText("a\u061cb\u00adc"), "a\\u061cb\\u00adc");
  assertEquals(shownText("\u202epay\u202d\u2067"), "\\u202epay\\u202d\\u2067");
  // Past U+FFFF, as JSON spells it: the two UTF-16 halves.
  assertEquals(
    shownText("x\u{e0000}\u{e0041}\u{e007f}"),
    "x\\udb40\\udc00\\udb40\\udc41\\udb40\\udc7f",
  );
  for (let code = 0xe0000; code <= 0xe007f; code++) {
    const shown = shownText(String.fromCodePoint(code));
    assert(shown.startsWith("\\udb40\\udc"), `U+${code.toString(16)} shown as ${shown}`);
  }
});

Deno.test("the set is Unicode's categories: a private-use, a lone surrogate, an unassigned code point, a Hangul filler, a no-break space", () => {
  assertEquals(shownText("\ue000"), "\\ue000"); // Co
  assertEquals(shownText("\ud800x"), "\\ud800x"); // Cs
  assertEquals(shownText("\u0378"), "\\u0378"); // Cn
  assertEquals(shownText("\u3164"), "\\u3164"); // Default_Ignorable_Code_Point (Lo)
  assertEquals(shownText("a\u00a0b\u3000c"), "a\\u00a0b\\u3000c"); // Zs other than U+0020
  assertEquals(shownText("\u2028\u2029"), "\\u2028\\u2029"); // Zl, Zp
  assertEquals(shownText("\u0085\u009b"), "\\u0085\\u009b"); // C1 controls
  assertEquals(shownText("\u001b[2J\t"), "\\u001b[2J\\t");
});

Deno.test("letters, digits, accents and emoji of every script pass as they are", () => {
  const text = "Zürich 東京 שלום مرحبا 😀 naïve ½ ∑";
  assertEquals(shownText(text), text);
});

Deno.test("past eight spaces in a row each space is \\u0020, so padding cannot reach a wrapped row's start", () => {
  assertEquals(shownText("a        b"), "a        b");
  const padded = shownText(`x${" ".repeat(200)}  12:00:02 result`);
  assertEquals(padded, `x${" ".repeat(8)}${"\\u0020".repeat(194)}12:00:02 result`);
});

Deno.test("a text past its limit is cut with the count of what is left", () => {
  assertEquals(shownText("abcdef", { max: 4 }), "abcd… [2 more characters]");
  assertEquals(
    shownText("ab\u{e0041}\u{e0042}", { max: 4 }),
    "ab\\udb40\\udc41… [1 more characters]",
  );
  assertEquals(shownText("x".repeat(SHOWN_MAX + 5)).endsWith("… [5 more characters]"), true);
  assertEquals(shownText("abc", { max: 3 }), "abc");
  assertEquals(shownText("a".repeat(10_000), { max: Infinity }), "a".repeat(10_000));
});

Deno.test("shownLines splits at newlines only, escapes the rest of each line, and cuts the whole", () => {
  assertEquals(shownLines("one\ntwo\r\n\u202ethree"), ["one", "two\\r", "\\u202ethree"]);
  assertEquals(shownLines(""), [""]);
  // Each newline counts as the two characters of `\n`.
  assertEquals(shownLines("abc\ndefgh\nij", { max: 7 }), ["abc", "de… [6 more characters]"]);
  assertEquals(shownLines("abc\ndefgh\nij", { max: 5 }), ["abc… [9 more characters]"]);
});

Deno.test("whatever a task writes, shownText shows no newline and no hidden character, and plain text is unchanged", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: "binary", maxLength: 300 }),
        fc.stringMatching(/^[ a\n\u202e]{0,40}$/),
      ),
      (text) => {
        const shown = shownText(text, { max: Infinity });
        // The whole text's way (one replace) and the cut's (character by character) agree.
        assertEquals(shown, shownText(text, { max: 1e9 }));
        assert(!shown.includes("\n"), JSON.stringify(shown));
        for (const char of shown) {
          assert(!HIDDEN.test(char), `U+${char.codePointAt(0)!.toString(16)}`);
        }
        for (const line of shownLines(text, { max: Infinity })) {
          for (const char of line) assert(!HIDDEN.test(char), JSON.stringify(line));
        }
      },
    ),
    { verbose: true },
  );
  fc.assert(
    fc.property(fc.stringMatching(/^[a-zA-Z0-9.,:;!?()'"{}\[\]-]{0,80}$/), (text) => {
      assertEquals(shownText(text), text);
    }),
  );
});

Deno.test("shownLines of a text of empty lines is cut: 100000 newlines are not 100001 rows on the owner's screen", () => {
  const lines = shownLines("\n".repeat(100_000));
  assertEquals(lines.length, SHOWN_LINES_MAX);
  assertEquals(lines.at(-1), `… [${100_000 - (SHOWN_LINES_MAX - 1)} more characters]`);
});
