/**
 * The endpoint's redaction of texts that arrive in pieces, against an oracle. Plain text in any
 * pieces gives what redacting the whole text gives, each piece unchanged where no value is; JSON
 * text in any pieces, its strings escaped at random, parses to the value with every string
 * redacted, and is unchanged byte for byte where no value is. Property tests (fast-check).
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { JsonTextStream } from "../../mod/model-proxy/json_text_stream.ts";
import { Piece, PieceStream } from "../../mod/model-proxy/piece_stream.ts";
import { ToolInputStream } from "../../mod/model-proxy/tool_input_stream.ts";
import { redactValue } from "../../mod/common/mod.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";

const alphabet = fc.constantFrom(...'abcdefgh=+/%-_ é"\\\n'.split(""));
const secretArb = fc.array(fc.constantFrom(..."abcdefgh-_é".split("")), {
  minLength: 8,
  maxLength: 14,
}).map((cs) => cs.join(""));

/** `text` cut at `cuts` (taken modulo its length), as its pieces in order. */
function cutUp(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let from = 0;
  for (const point of points) {
    parts.push(text.slice(from, point));
    from = point;
  }
  parts.push(text.slice(from));
  return parts;
}

Deno.test("property: a text in any pieces is redacted as the whole text, and a piece with no value is unchanged", () => {
  fc.assert(
    fc.property(
      fc.array(secretArb, { minLength: 1, maxLength: 3 }),
      fc.array(fc.oneof(alphabet, secretArb), { maxLength: 30 }),
      fc.array(fc.nat(200), { maxLength: 12 }),
      fc.boolean(),
      (secrets, parts, cuts, plant) => {
        const redactor = Redactor.forValues(secrets);
        const text = (plant ? [...parts, ...secrets, ...parts] : parts).join("");
        const stream = new PieceStream(answerRedaction(redactor));
        const pieces = cutUp(text, cuts).map((part) => new Piece(part));
        for (const piece of pieces) stream.push(piece, piece.original);
        stream.end();
        assert(pieces.every((piece) => piece.ready), "a piece is still held after the end");
        assertEquals(pieces.map((piece) => piece.out).join(""), redactor.redact(text));
        if (redactor.matches(text).length === 0) {
          assertEquals(pieces.map((piece) => piece.out), pieces.map((piece) => piece.original));
        }
      },
    ),
    { numRuns: 400 },
  );
});

/** JSON text of `value` with each string character \u-escaped where `escape` says so. */
function spell(value: unknown, escape: () => boolean): string {
  if (typeof value === "string") {
    return `"${
      [...value].map((c) => {
        if (escape()) {
          return [...c].map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`)
            .join("");
        }
        return JSON.stringify(c).slice(1, -1);
      }).join("")
    }"`;
  }
  if (Array.isArray(value)) return `[${value.map((item) => spell(item, escape)).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const fields = Object.entries(value).map(([k, v]) => `${spell(k, escape)}:${spell(v, escape)}`);
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value);
}

Deno.test("property: JSON text in any pieces, escaped at random, parses to the value with every string redacted", () => {
  fc.assert(
    fc.property(
      fc.array(secretArb, { minLength: 1, maxLength: 2 }),
      fc.nat(),
      fc.array(fc.nat(400), { maxLength: 12 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
      (secrets, seed, cuts, escapes) => {
        const word = fc.oneof(
          fc.array(alphabet, { maxLength: 10 }).map((cs) => cs.join("")),
          fc.constantFrom(...secrets),
          fc.tuple(fc.constantFrom(...secrets), alphabet).map(([s, c]) => `${c}${s}${c}`),
        );
        const { value } = fc.letrec((tie) => ({
          value: fc.oneof(
            { depthSize: "small" },
            word,
            fc.integer(),
            fc.constantFrom(true, false, null),
            fc.array(tie("value"), { maxLength: 3 }),
            fc.dictionary(word, tie("value"), { maxKeys: 3 }),
          ),
        }));
        const input = fc.sample(value, { seed, numRuns: 1 })[0];
        let turn = 0;
        const text = spell(input, () => escapes[turn++ % escapes.length]);
        const redactor = Redactor.forValues(secrets);
        const stream = new JsonTextStream(answerRedaction(redactor));
        const pieces = cutUp(text, cuts).map((part) => new Piece(part));
        for (const piece of pieces) stream.push(piece, piece.original);
        stream.end();
        assert(pieces.every((piece) => piece.ready), "a piece is still held after the end");
        const out = pieces.map((piece) => piece.out).join("");
        const expected = redactValue(input, (t) => redactor.redact(t));
        assertEquals(JSON.parse(out), expected);
        if (JSON.stringify(expected) === JSON.stringify(input)) assertEquals(out, text);
      },
    ),
    { numRuns: 400 },
  );
});

Deno.test("property: a tool input in any pieces, JSON or bare words, joins to no value, and is unchanged where none is", () => {
  // What the JSON lexer lets pass outside strings, quotes, and values with spaces in them: the
  // joined text need not be JSON, and a worker that cannot parse it keeps it as it is.
  const plain = fc.constantFrom(...'abcdefgh-_ {}[]:,"'.split(""));
  const phrase = fc.array(fc.constantFrom(..."abcdefgh-_ ".split("")), {
    minLength: 8,
    maxLength: 14,
  }).map((cs) => cs.join("")).filter((value) => value.trim().length === value.length);
  fc.assert(
    fc.property(
      fc.array(phrase, { minLength: 1, maxLength: 2 }),
      fc.array(fc.oneof(plain, phrase), { maxLength: 30 }),
      fc.array(fc.nat(200), { maxLength: 12 }),
      fc.boolean(),
      (secrets, parts, cuts, plant) => {
        const redactor = Redactor.forValues(secrets);
        const text = (plant ? [...parts, ...secrets, ...parts] : parts).join("");
        const stream = new ToolInputStream(answerRedaction(redactor));
        const pieces = cutUp(text, cuts).map((part) => new Piece(part));
        for (const piece of pieces) stream.push(piece, piece.original);
        stream.end();
        assert(pieces.every((piece) => piece.ready), "a piece is still held after the end");
        const out = pieces.map((piece) => piece.out).join("");
        assertEquals(redactor.redact(out), out, "the joined input holds a value");
        if (redactor.matches(text).length === 0) {
          assertEquals(pieces.map((piece) => piece.out), pieces.map((piece) => piece.original));
        }
      },
    ),
    { numRuns: 400 },
  );
});
