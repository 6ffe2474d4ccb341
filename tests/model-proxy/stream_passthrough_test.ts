/**
 * The endpoint's redaction leaves an ordinary streamed answer alone: the same events, byte for byte,
 * even where a delta ends in what could be the start of a vault value; and it streams: each event
 * reaches the worker before the model service sends the next. Through a real core and a model
 * service over real HTTP, with a vault value planted.
 */
import { assert, assertEquals } from "../assert.ts";
import { anthropicReply } from "../../mod/loop/wire_anthropic.ts";
import { openaiReply } from "../../mod/loop/wire_openai.ts";
import {
  anthropicMessage,
  asAnswer,
  askModel,
  openaiChunks,
  SECRET,
  sse,
  textBlock,
  thinkingBlock,
  toolBlock,
  withEndpoint,
} from "./scripted_service.ts";

/** An Anthropic answer with thinking, text and a tool call; one delta ends in the value's start. */
function ordinaryAnthropic(): string[] {
  const writes = anthropicMessage([
    thinkingBlock(0, ["The user wants the files ", "listed, so I will run ls. "]),
    textBlock(1, [
      "Let me look. The prefix ",
      SECRET.slice(0, 12),
      "dle is not a key, and nor is ",
      SECRET.slice(0, 20),
    ]),
    toolBlock(2, "shell", ['{"command": "ls -la', ' /tmp", "note": "caf\\u00e9"}']),
  ]);
  writes.splice(1, 0, sse("ping", { type: "ping" }));
  return writes;
}

Deno.test("an ordinary streamed Anthropic answer reaches the worker byte for byte", async () => {
  await withEndpoint("anthropic", async ({ service, task }) => {
    const writes = ordinaryAnthropic();
    service.answer({ writes });
    const response = await askModel(task);
    assertEquals(response.status, 200);
    const received = await response.text();
    assertEquals(received, writes.join(""));
    const reply = await anthropicReply(asAnswer(received));
    assertEquals(
      reply.text,
      `Let me look. The prefix ${SECRET.slice(0, 12)}dle is not a key, and nor is ${
        SECRET.slice(0, 20)
      }`,
    );
    assertEquals(reply.calls[0].input, { command: "ls -la /tmp", note: "café" });
  });
});

Deno.test("an ordinary streamed OpenAI answer reaches the worker byte for byte", async () => {
  await withEndpoint("openai", async ({ service, task }) => {
    const writes = openaiChunks(["Let me look. ", SECRET.slice(0, 12), "dle is fine."], [{
      name: "shell",
      arguments: ['{"command":', ' "ls"}'],
    }]);
    service.answer({ writes });
    const received = await (await askModel(task)).text();
    assertEquals(received, writes.join(""));
    const reply = await openaiReply(asAnswer(received));
    assertEquals(reply.text, `Let me look. ${SECRET.slice(0, 12)}dle is fine.`);
    assertEquals(reply.calls[0].input, { command: "ls" });
  });
});

Deno.test("the endpoint streams: each event of an ordinary answer reaches the worker before the service sends the next", async () => {
  await withEndpoint("anthropic", async ({ service, task }) => {
    const writes = anthropicMessage([
      textBlock(0, ["One. ", "Two. ", "Three. "]),
      toolBlock(1, "shell", ['{"command": ', '"ls"}']),
    ]);
    const read = writes.map(() => Promise.withResolvers<void>());
    service.answer({ writes, gates: read.map((r) => r.promise) });
    const response = await askModel(task);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = "";
    let sent = 0; // events the worker has whole
    while (sent < writes.length) {
      const timer = Promise.withResolvers<never>();
      const id = setTimeout(
        () => timer.reject(new Error(`event ${sent} did not reach the worker within 5 s`)),
        5000,
      );
      const next = await Promise.race([reader.read(), timer.promise]).finally(() =>
        clearTimeout(id)
      );
      assert(!next.done, `the answer ended after ${sent} events`);
      received += next.value;
      while (sent < writes.length && received.startsWith(writes.slice(0, sent + 1).join(""))) {
        read[sent++].resolve(); // the service may send the next event now
      }
    }
    assertEquals(received, writes.join(""));
  });
});
