/**
 * The model endpoint's streamed answer is redacted across the chunks it really arrives in: a model
 * service that sends a vault value in two writes, the second held until the worker has read what
 * the endpoint passed on of the first, never gets any part of the value to the worker, wherever the
 * value is cut. Through a real core, its task socket, and a model service over real HTTP.
 */
import { assert, assertEquals } from "../assert.ts";
import { askModel, REDACTED, SECRET, startEndpointBox } from "./scripted_service.ts";

/** Anthropic's streamed answer with `text` as its one text block, as SSE. */
function anthropicStream(text: string): string {
  const events: [string, unknown][] = [
    ["message_start", {
      type: "message_start",
      message: { id: "msg_1", role: "assistant", content: [], usage: { input_tokens: 10 } },
    }],
    ["content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }],
    ["content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text },
    }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 5 },
    }],
    ["message_stop", { type: "message_stop" }],
  ];
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
}

/** The answer of the next request: sent up to `splitAt`, the rest once `rest` resolves. */
interface SplitAnswer {
  text: string;
  splitAt: number;
  rest: Promise<void>;
}

/** A model service on 127.0.0.1 that answers each request with the answer `next()` gives. */
function startSplittingModel(next: () => SplitAnswer): { url: string; close(): Promise<void> } {
  const encoder = new TextEncoder();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    const answer = next();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode(answer.text.slice(0, answer.splitAt)));
        await answer.rest;
        controller.enqueue(encoder.encode(answer.text.slice(answer.splitAt)));
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test("a vault value the model service sends in two writes, cut at any of its characters, reaches the worker only as [a vault key]", async () => {
  const text = anthropicStream(`Here is the key you asked for: ${SECRET}. Keep it safe.`);
  const at = text.indexOf(SECRET);
  const expected = text.replaceAll(SECRET, REDACTED);
  let answer: SplitAnswer | null = null;
  let rest = Promise.withResolvers<void>();
  const model = startSplittingModel(() => {
    if (answer === null) throw new Error("a model request the test did not expect");
    return answer;
  });
  const { box, task } = await startEndpointBox("anthropic", model);
  try {
    for (let cut = 1; cut < SECRET.length; cut++) {
      rest = Promise.withResolvers<void>();
      answer = { text, splitAt: at + cut, rest: rest.promise };
      const response = await askModel(task);
      assertEquals(response.status, 200);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      // The first write has reached the worker (what of it the endpoint may pass on) before the
      // second is sent: the endpoint sees the value in two chunks.
      const first = await reader.read();
      assert(!first.done, `cut ${cut}: the stream ended before the second write`);
      let received = first.value;
      assert(
        expected.startsWith(received),
        `cut ${cut}: what reached the worker first is not the start of the redacted answer`,
      );
      rest.resolve();
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        received += value;
      }
      answer = null;
      assert(!received.includes(SECRET.slice(0, 8)), `cut ${cut}: part of the value reached`);
      assert(!received.includes(SECRET.slice(-8)), `cut ${cut}: part of the value reached`);
      assertEquals(received, expected, `cut ${cut}: the worker's text is not the redacted answer`);
    }
  } finally {
    rest.resolve();
    await box.close();
    await model.close();
  }
});
