/** The backstop: every form of a secret is replaced, and a streamed text gives the same result. */
import fc from "fast-check";
import { Buffer } from "node:buffer";
import { assert, assertEquals, assertNotIncludes } from "../assert.ts";
import {
  REDACTED,
  redactingByteStream,
  redactingStream,
  Redactor,
  StreamRedactor,
} from "../../mod/vault/mod.ts";

const SECRET = "sk-live/Zq9+x?y&z=1 é";

function encodings(value: string): Record<string, string> {
  const bytes = Buffer.from(value, "utf-8");
  return {
    raw: value,
    json: JSON.stringify(value).slice(1, -1),
    base64: bytes.toString("base64"),
    base64url: bytes.toString("base64url"),
    hex: bytes.toString("hex"),
    HEX: bytes.toString("hex").toUpperCase(),
    url: encodeURIComponent(value),
    form: new URLSearchParams({ v: value }).toString().slice(2),
    everyByte: [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join(""),
  };
}

Deno.test("a secret is replaced raw, JSON-escaped, base64, base64url, hex and URL-encoded", () => {
  const redactor = Redactor.forEntries([["SHOP_SECRET_KEY", SECRET]]);
  for (const [form, text] of Object.entries(encodings(SECRET))) {
    const out = redactor.redact(`before ${text} after`);
    assertEquals(out.startsWith("before "), true, form);
    assertNotIncludes(out, text, `the ${form} form survived`);
    assert(out.includes(REDACTED), `the ${form} form was not replaced: ${out}`);
  }
});

Deno.test("a secret base64-encoded inside a longer text is found at every byte alignment", () => {
  const redactor = Redactor.forValues([SECRET]);
  for (const prefix of ["", "a", "ab", "abc", "user:"]) {
    const encoded = Buffer.from(`${prefix}${SECRET}!`).toString("base64");
    const out = redactor.redact(encoded);
    assert(out.includes(REDACTED), `prefix ${JSON.stringify(prefix)}: ${out}`);
    // What is left around the marker is shorter than the secret's own encoding.
    assert(out.replace(REDACTED, "").length < encoded.length - 20, out);
  }
});

Deno.test("only names ending in KEY, TOKEN, SECRET, PASSWORD or ACCESS with 8+ characters are redacted", () => {
  const redactor = Redactor.forEntries([
    ["API_KEY", "value-of-key"],
    ["GH_TOKEN", "value-of-token"],
    ["APP_SECRET", "value-of-secret"],
    ["DB_PASSWORD", "value-of-password"],
    ["CLOUD_ACCESS", "value-of-access"],
    ["SHORT_KEY", "1234567"],
    ["DATABASE_URL", "postgres://host/db"],
  ]);
  const text = "value-of-key value-of-token value-of-secret value-of-password value-of-access";
  assertEquals(redactor.redact(text), Array(5).fill(REDACTED).join(" "));
  assertEquals(redactor.redact("1234567 postgres://host/db"), "1234567 postgres://host/db");
});

Deno.test("overlapping secrets are replaced leftmost-longest, whatever the order of the keys", () => {
  const a = Redactor.forValues(["abcdefgh", "abcdefghijkl"]);
  const b = Redactor.forValues(["abcdefghijkl", "abcdefgh"]);
  assertEquals(a.redact("xabcdefghijkly"), `x${REDACTED}y`);
  assertEquals(b.redact("xabcdefghijkly"), `x${REDACTED}y`);
  assertEquals(a.redact("abcdefgh-abcdefgh"), `${REDACTED}-${REDACTED}`);
});

Deno.test("a secret split across two chunks of a stream is still caught", () => {
  const redactor = Redactor.forValues(["tok_0123456789abcdef"]);
  const stream = new StreamRedactor(redactor);
  const out = stream.push("the key is tok_01234") + stream.push("56789abcdef, done") +
    stream.flush();
  assertEquals(out, `the key is ${REDACTED}, done`);
});

Deno.test("property: redacting a stream in any chunks equals redacting the whole text", () => {
  const alphabet = fc.constantFrom(..."abcdefgh=+/%-_ é".split(""));
  const word = fc.array(alphabet, { minLength: 8, maxLength: 14 }).map((cs) => cs.join(""));
  fc.assert(
    fc.property(
      fc.array(word, { minLength: 1, maxLength: 3 }),
      fc.array(fc.oneof(alphabet, word), { maxLength: 40 }),
      fc.array(fc.nat(60), { maxLength: 12 }),
      (secrets, parts, cuts) => {
        const redactor = Redactor.forValues(secrets);
        // Put every secret (and an encoded copy) into the text so that matches are common.
        const every = [...Buffer.from(secrets[0])].map((b) =>
          `%${b.toString(16).padStart(2, "0")}`
        );
        const text = [...parts, ...secrets, Buffer.from(secrets[0]).toString("base64"), ...parts]
          .join("") + every.join("");
        const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((x, y) =>
          x - y
        );
        const stream = new StreamRedactor(redactor);
        let out = "";
        let from = 0;
        for (const point of points) {
          out += stream.push(text.slice(from, point));
          from = point;
        }
        out += stream.push(text.slice(from)) + stream.flush();
        assertEquals(out, redactor.redact(text));
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("the text and byte TransformStreams redact across chunks and split characters", async () => {
  const redactor = Redactor.forValues(["pässwörd-123"]);
  const chunks = ["say pä", "ssw", "örd-1", "23 ok"];
  const text = await new Response(
    ReadableStream.from(chunks).pipeThrough(redactingStream(redactor))
      .pipeThrough(new TextEncoderStream()),
  ).text();
  assertEquals(text, `say ${REDACTED} ok`);
  const bytes = new TextEncoder().encode("say pässwörd-123 ok");
  const split = [bytes.slice(0, 6), bytes.slice(6, 7), bytes.slice(7)]; // inside "ä"
  const out = await new Response(
    ReadableStream.from(split).pipeThrough(redactingByteStream(redactor)),
  ).text();
  assertEquals(out, `say ${REDACTED} ok`);
});
