/** Server-sent events: the `data:` payloads of a streamed answer, one at a time. */

/**
 * Yields the data of each event in `body` (multi-line data joined with newlines). Each chunk is
 * searched for line ends once; a line not yet ended is kept as the chunks it came in and joined
 * when its end arrives, so a long line costs time in proportion to its length.
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let parts: string[] = [];
  let data: string[] = [];
  const line = (text: string): string | null => {
    const whole = (parts.length === 0 ? text : parts.join("") + text).replace(/\r$/, "");
    parts = [];
    if (whole === "") {
      const event = data.length > 0 ? data.join("\n") : null;
      data = [];
      return event;
    }
    if (whole.startsWith("data:")) data.push(whole.slice(5).replace(/^ /, ""));
    return null;
  };
  for await (const chunk of body) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    let end: number;
    while ((end = text.indexOf("\n", start)) !== -1) {
      const event = line(text.slice(start, end));
      start = end + 1;
      if (event !== null) yield event;
    }
    if (start < text.length) parts.push(text.slice(start));
  }
  if (data.length > 0) yield data.join("\n");
}
