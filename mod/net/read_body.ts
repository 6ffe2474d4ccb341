/**
 * Reading an HTTP message's body whole under a byte limit: a request's, for every server of gurt's,
 * and a response's, for what the core reads whole from a service.
 */

/**
 * Reads at most `limit` bytes of the message's body, in one ArrayBuffer of exactly its size. A
 * declared Content-Length above the limit, or more bytes than the limit arriving, throws what
 * `tooLarge` makes. A declared length within the limit is read whole (the server reads exactly
 * that many bytes), which skips a stream reader and a promise per chunk; a body without one is
 * counted chunk by chunk. Errors of the read itself are thrown as they come.
 */
export async function readRequestBody(
  request: Request | Response,
  cap: { limit: number; tooLarge: () => Error },
): Promise<Uint8Array<ArrayBuffer>> {
  const { limit, tooLarge } = cap;
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (declared > limit) throw tooLarge();
  if (Number.isSafeInteger(declared) && declared >= 0) {
    // Not request.body first: that getter makes a stream that bytes() would not need (an empty
    // body reads as no bytes).
    const bytes = await request.bytes();
    if (bytes.length > limit) throw tooLarge();
    return bytes;
  }
  if (request.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}
