/**
 * A candidate request's body, as the door holds it while the call is decided: its first bytes
 * read (for the owner's approval text, and so a small body is sent whole, with its length), the
 * rest left in the stream, sent on only if the call runs.
 */

/** The most bytes read before the call is decided; past it the body is streamed. */
export const PREFIX_BYTES = 64 * 1024;

/** How many of the body's bytes the approval text shows. */
export const PREVIEW_BYTES = 200;

/** The body's first bytes, and the body to send: whole when it ended within them. */
export interface BodyPrefix {
  first: Uint8Array;
  /** Whether `first` is the whole body. */
  whole: boolean;
  body: Uint8Array | ReadableStream<Uint8Array> | null;
}

/** Reads up to PREFIX_BYTES of `body`; the rest stays to be streamed after them. */
export async function readPrefix(body: ReadableStream<Uint8Array> | null): Promise<BodyPrefix> {
  if (body === null) return { first: new Uint8Array(0), whole: true, body: null };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let ended = false;
  while (length < PREFIX_BYTES) {
    const read = await reader.read();
    if (read.done) {
      ended = true;
      break;
    }
    chunks.push(read.value);
    length += read.value.length;
  }
  const first = joined(chunks, length);
  if (ended) return { first, whole: true, body: first };
  let sentFirst = false;
  const rest = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sentFirst) {
        sentFirst = true;
        controller.enqueue(first);
        return;
      }
      const read = await reader.read();
      if (read.done) controller.close();
      else controller.enqueue(read.value);
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {});
    },
  });
  return { first, whole: false, body: rest };
}

/**
 * What the owner's approval shows of a body: its first bytes, printable ASCII as it is and every
 * other byte as \xNN (so no control character, escape sequence or lookalike reaches a terminal),
 * and its size.
 */
export function bodyPreview(prefix: BodyPrefix): string {
  if (prefix.first.length === 0) return "(no body)";
  const shown = prefix.first.subarray(0, PREVIEW_BYTES);
  let text = "";
  for (const byte of shown) {
    if (byte >= 0x20 && byte < 0x7f && byte !== 0x5c) text += String.fromCharCode(byte);
    else text += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  const more = prefix.first.length > shown.length || !prefix.whole;
  const size = prefix.whole
    ? `${prefix.first.length} bytes`
    : `more than ${prefix.first.length} bytes`;
  return `body (${size}): ${text}${more ? "..." : ""}`;
}

function joined(chunks: Uint8Array[], length: number): Uint8Array {
  const whole = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.length;
  }
  return whole;
}
