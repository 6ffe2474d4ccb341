/**
 * redactingExactBytes: a stream of any bytes in which every vault value (ASCII) is replaced by
 * `[a vault key]` wherever the chunks are cut, and every other byte comes out as it went in, bytes
 * that are not UTF-8 included. The expected output is built here byte by byte (leftmost-longest
 * over the raw values), not with the redactor under test.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { answerRedaction, REDACTED, redactingExactBytes, Redactor } from "../../mod/vault/mod.ts";

const latin1 = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const MARKER = latin1(REDACTED);

/** Runs `chunks` through a fresh redactingExactBytes for `secrets`; the chunks that came out. */
async function pipe(secrets: string[], chunks: Uint8Array[]): Promise<Uint8Array[]> {
  const stream = redactingExactBytes(answerRedaction(Redactor.forValues(secrets)));
  const writer = stream.writable.getWriter();
  const written = (async () => {
    for (const chunk of chunks) await writer.write(chunk);
    await writer.close();
  })();
  const out: Uint8Array[] = [];
  for await (const chunk of stream.readable) out.push(chunk);
  await written;
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** `input` with every raw secret replaced, leftmost first, the longest where several start. */
function expected(input: Uint8Array, secrets: string[]): Uint8Array {
  const forms = secrets.map(latin1).sort((a, b) => b.length - a.length);
  const out: number[] = [];
  let at = 0;
  while (at < input.length) {
    const form = forms.find((f) => f.every((byte, i) => input[at + i] === byte));
    if (form === undefined) {
      out.push(input[at]);
      at++;
    } else {
      out.push(...MARKER);
      at += form.length;
    }
  }
  return Uint8Array.from(out);
}

/** Cuts `bytes` at the given offsets (sorted, deduplicated), each chunk a view into one buffer. */
function cutAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  // One shared buffer with bytes before and after: a chunk read past its own view shows up.
  const backing = new Uint8Array(bytes.length + 8).fill(0x21);
  backing.set(bytes, 4);
  const view = backing.subarray(4, 4 + bytes.length);
  const points = [...new Set([0, ...cuts, bytes.length])].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i + 1 < points.length; i++) chunks.push(view.subarray(points[i], points[i + 1]));
  return chunks;
}

const SECRET = "ghp_Zq9xY7wV6uT5sR4q";
/** Not UTF-8: a lone continuation byte, a cut two-byte lead, 0xff, NUL, and Latin-1 letters. */
const BINARY = Uint8Array.from([0x80, 0xc3, 0x28, 0xff, 0x00, 0xe9, 0xfe, 0xbf, 0x0a]);

Deno.test("a secret between non-UTF-8 bytes is replaced at every split point of two chunks, and every other byte is kept", async () => {
  const input = concat([BINARY, latin1(SECRET), BINARY]);
  const want = concat([BINARY, MARKER, BINARY]);
  for (let cut = 0; cut <= input.length; cut++) {
    const out = concat(await pipe([SECRET], cutAt(input, [cut])));
    assertEquals(out, want, `split at byte ${cut}`);
  }
});

Deno.test("a secret split at every pair of points into three chunks is still replaced", async () => {
  const input = concat([latin1("ab"), latin1(SECRET), latin1("cd")]);
  const want = concat([latin1("ab"), MARKER, latin1("cd")]);
  for (let one = 0; one <= input.length; one++) {
    for (let two = one; two <= input.length; two++) {
      const out = concat(await pipe([SECRET], cutAt(input, [one, two])));
      assertEquals(out, want, `split at bytes ${one} and ${two}`);
    }
  }
});

Deno.test("one byte at a time: several secrets, one the prefix of another and one overlapping itself, are each replaced; nothing is emitted that could still be part of a secret", async () => {
  // "aaaaaaaab" overlaps itself: in ten a's and a b, the match starts two bytes on.
  const secrets = ["sk-AAAA1111", "sk-AAAA1111-long", "aaaaaaaab", "tok_QQQQ9999"];
  const text = "x sk-AAAA1111-long y sk-AAAA1111-lon z aaaaaaaaaab sk-AAAA111 tok_QQQQ9999" +
    "sk-AAAA1111";
  const input = concat([latin1(text), BINARY]);
  const chunks = cutAt(input, [...input.keys()]);
  assertEquals(chunks.length, input.length);
  const out = await pipe(secrets, chunks);
  assertEquals(
    new TextDecoder("latin1").decode(concat(out)),
    `x ${REDACTED} y ${REDACTED}-lon z aa${REDACTED} sk-AAAA111 ${REDACTED}${REDACTED}` +
      new TextDecoder("latin1").decode(BINARY),
  );
  // No chunk that came out carries the start of a secret that was then completed.
  for (const chunk of out) {
    const seen = new TextDecoder("latin1").decode(chunk);
    for (const secret of secrets) assert(!seen.includes(secret), `${secret} came out`);
  }
});

Deno.test("with no secret in it, a stream of any bytes comes out byte for byte the same, however it is cut", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uint8Array({ maxLength: 300 }),
      fc.array(fc.nat({ max: 300 }), { maxLength: 20 }),
      async (bytes, cuts) => {
        const out = concat(
          await pipe([SECRET], cutAt(bytes, cuts.map((c) => c % (bytes.length + 1)))),
        );
        assertEquals(out, bytes);
      },
    ),
    { numRuns: 300, verbose: true },
  );
});

Deno.test("any bytes with secrets placed anywhere and cut anywhere come out as the byte-wise replacement", async () => {
  const secrets = [SECRET, "sk-live-12345678", "sk-live-12345678-9"];
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.oneof(fc.uint8Array({ maxLength: 12 }), fc.constantFrom(...secrets.map(latin1))),
        { maxLength: 12 },
      ),
      fc.array(fc.nat({ max: 400 }), { maxLength: 25 }),
      async (pieces, cuts) => {
        const bytes = concat(pieces);
        const out = concat(
          await pipe(secrets, cutAt(bytes, cuts.map((c) => c % (bytes.length + 1)))),
        );
        assertEquals(out, expected(bytes, secrets));
      },
    ),
    { numRuns: 300, verbose: true },
  );
});

Deno.test("a stream that ends inside the start of a secret gives those bytes back at the end, unchanged", async () => {
  const input = concat([BINARY, latin1(SECRET.slice(0, -1))]);
  const chunks = await pipe([SECRET], cutAt(input, [3, 12]));
  assertEquals(concat(chunks), input);
  assert(chunks.every((chunk) => chunk.length > 0), "an empty chunk was emitted");
});
