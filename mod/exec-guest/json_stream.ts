/**
 * A JSON object streamed as it is written: captured output goes out chunk by chunk, so answering
 * with 8 MiB of stdout never holds the whole body as one string (memory stays near the capture).
 */
import type { OutputBuffer } from "./output_buffer.ts";

/** Output up to this many bytes is answered in one piece; more is streamed. */
const SMALL = 256 * 1024;

/** A text field whose value is a captured stream, from a byte offset on. */
export interface OutputField {
  buffer: OutputBuffer;
  since: number;
}

/** Answers `{...head, <outputs as strings>, ...tail}` as application/json, streamed. */
export function jsonWithOutputs(
  outputs: Record<string, OutputField>,
  around: { head: Record<string, unknown>; tail: Record<string, unknown> },
): Response {
  const { head, tail } = around;
  let size = 0;
  for (const field of Object.values(outputs)) size += field.buffer.length - field.since;
  if (size <= SMALL) {
    const whole: Record<string, unknown> = { ...head };
    for (const [name, field] of Object.entries(outputs)) {
      whole[name] = field.buffer.text(field.since);
    }
    return new Response(JSON.stringify({ ...whole, ...tail }), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }
  const encoder = new TextEncoder();
  const parts = function* (): Generator<Uint8Array> {
    const opening = JSON.stringify(head).slice(0, -1);
    yield encoder.encode(opening);
    let first = opening === "{";
    for (const [name, field] of Object.entries(outputs)) {
      yield encoder.encode(`${first ? "" : ","}${JSON.stringify(name)}:"`);
      first = false;
      const decoder = new TextDecoder();
      for (const piece of field.buffer.pieces(field.since)) {
        yield encoder.encode(escape(decoder.decode(piece, { stream: true })));
      }
      yield encoder.encode(`${escape(decoder.decode())}"`);
    }
    const rest = JSON.stringify(tail).slice(1);
    yield encoder.encode(rest === "}" ? "}" : `${first ? "" : ","}${rest}`);
  };
  const iterator = parts();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
}

function escape(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}
