/**
 * A vault value the model service spreads over two events of a streamed answer, or spells with
 * JSON escapes, never reaches the worker in the text it puts together: Anthropic text deltas,
 * tool-use input, text blocks that a worker joins, and OpenAI chat chunks, each cut at every one of
 * the value's characters. Through a real core, its task socket and a model service over real HTTP;
 * the answer is read back as gurt's own worker reads it, and strictly as server-sent events.
 */
import { assert, assertEquals } from "../assert.ts";
import { anthropicReply } from "../../mod/loop/wire_anthropic.ts";
import { openaiReply } from "../../mod/loop/wire_openai.ts";
import {
  anthropicBlocks,
  anthropicMessage,
  asAnswer,
  askModel,
  escaped,
  openaiChunks,
  openaiParts,
  readEvents,
  REDACTED,
  SECRET,
  type SseService,
  startEndpointBox,
  startSseService,
  textBlock,
  toolBlock,
  withEndpoint,
} from "./scripted_service.ts";
import type { EndpointTask } from "./scripted_service.ts";

const TEXT = `Here is the key you asked for: ${SECRET}. Keep it safe.`;
const EXPECTED = TEXT.replaceAll(SECRET, REDACTED);

/** Sends `writes` as the next answer, its last write held until the worker has read something. */
async function relay(service: SseService, task: EndpointTask, writes: string[]): Promise<string> {
  const held = Promise.withResolvers<void>();
  service.answer({
    writes: [writes.slice(0, -1).join(""), writes.at(-1)!],
    gates: [held.promise],
  });
  try {
    const response = await askModel(task);
    assertEquals(response.status, 200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const first = await reader.read();
    held.resolve();
    let text = first.done ? "" : first.value;
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    return text;
  } finally {
    held.resolve();
  }
}

/** The event types of a list of written events, in order. */
function typesOf(writes: string[]): (string | null)[] {
  return readEvents(writes.join("")).map((e) => e.event);
}

function assertNoPart(text: string, where: string): void {
  assert(!text.includes(SECRET.slice(0, 8)), `${where}: the start of the value reached the worker`);
  assert(!text.includes(SECRET.slice(-8)), `${where}: the end of the value reached the worker`);
}

Deno.test("a vault value split across two text_delta events, at any of its characters, reaches the worker only as [a vault key]", async () => {
  await withEndpoint("anthropic", async ({ service, task }) => {
    const at = TEXT.indexOf(SECRET);
    for (let cut = 1; cut < SECRET.length; cut++) {
      const writes = anthropicMessage([
        textBlock(0, [TEXT.slice(0, at + cut), TEXT.slice(at + cut)]),
      ]);
      const received = await relay(service, task, writes);
      const events = readEvents(received);
      assertEquals(events.map((e) => e.event), typesOf(writes), `cut ${cut}: not the same events`);
      assertEquals(anthropicBlocks(events)[0].text, EXPECTED, `cut ${cut}`);
      assertEquals((await anthropicReply(asAnswer(received))).text, EXPECTED, `cut ${cut}`);
      assertNoPart(received, `cut ${cut}`);
    }
  });
});

Deno.test("a vault value split across two text blocks, which gurt's worker joins, reaches it only as [a vault key]", async () => {
  await withEndpoint("anthropic", async ({ service, task }) => {
    const at = TEXT.indexOf(SECRET);
    for (let cut = 1; cut < SECRET.length; cut++) {
      const writes = anthropicMessage([
        textBlock(0, [TEXT.slice(0, at + cut)]),
        textBlock(1, [TEXT.slice(at + cut)]),
      ]);
      const received = await relay(service, task, writes);
      const events = readEvents(received);
      assertEquals(events.map((e) => e.event), typesOf(writes), `cut ${cut}: not the same events`);
      const blocks = anthropicBlocks(events);
      assertEquals(blocks[0].text + blocks[1].text, EXPECTED, `cut ${cut}`);
      assertEquals((await anthropicReply(asAnswer(received))).text, EXPECTED, `cut ${cut}`);
      assertNoPart(received, `cut ${cut}`);
    }
  });
});

Deno.test("a vault value split across two OpenAI chat chunks, at any of its characters, reaches the worker only as [a vault key]", async () => {
  await withEndpoint("openai", async ({ service, task }) => {
    const at = TEXT.indexOf(SECRET);
    for (let cut = 1; cut < SECRET.length; cut++) {
      const writes = openaiChunks([TEXT.slice(0, at + cut), TEXT.slice(at + cut)]);
      const received = await relay(service, task, writes);
      const events = readEvents(received);
      assertEquals(events.map((e) => e.event), typesOf(writes), `cut ${cut}: not the same events`);
      assertEquals(openaiParts(events).text, EXPECTED, `cut ${cut}`);
      assertEquals((await openaiReply(asAnswer(received))).text, EXPECTED, `cut ${cut}`);
      assertNoPart(received, `cut ${cut}`);
    }
  });
});

Deno.test("a vault value spelled with JSON \\u escapes, in one event or split across two, reaches the worker only as [a vault key]", async () => {
  const anthropic = startSseService();
  const openai = startSseService();
  const a = await startEndpointBox("anthropic", anthropic);
  const o = await startEndpointBox("openai", openai);
  try {
    // The event's JSON spells every character of the value as \u00XX: the bytes on the wire hold
    // no form of it, the string the worker decodes holds it whole.
    const spell = (writes: string[]) => writes.map((w) => w.replace(SECRET, escaped(SECRET)));
    const whole = spell(anthropicMessage([textBlock(0, [TEXT])]));
    assert(!whole.join("").includes(SECRET), "the test's answer must not hold the value as is");
    let received = await relay(anthropic, a.task, whole);
    assertEquals(anthropicBlocks(readEvents(received))[0].text, EXPECTED);
    assertNoPart(received, "anthropic, one event");
    received = await relay(openai, o.task, spell(openaiChunks([TEXT])));
    assertEquals(openaiParts(readEvents(received)).text, EXPECTED);
    assertEquals((await openaiReply(asAnswer(received))).text, EXPECTED);
    assertNoPart(received, "openai, one event");
    // Escaped and split: the first part escaped, the rest as is, at every cut.
    const at = TEXT.indexOf(SECRET);
    for (let cut = 1; cut < SECRET.length; cut++) {
      const first = TEXT.slice(0, at + cut);
      const writes = anthropicMessage([textBlock(0, [first, TEXT.slice(at + cut)])])
        .map((w) => w.replace(JSON.stringify(first).slice(1, -1), escaped(first)));
      received = await relay(anthropic, a.task, writes);
      assertEquals(anthropicBlocks(readEvents(received))[0].text, EXPECTED, `cut ${cut}`);
      assertNoPart(received, `escaped, cut ${cut}`);
    }
  } finally {
    await a.box.close();
    await o.box.close();
    await anthropic.close();
    await openai.close();
  }
});

/** A tool's input whose command holds the value, as JSON text. */
const INPUT_JSON = JSON.stringify({ command: `echo ${SECRET} > key.txt`, cwd: "/tmp" });
const INPUT_EXPECTED = { command: `echo ${REDACTED} > key.txt`, cwd: "/tmp" };

Deno.test("a vault value in a tool call's input, split across input_json_delta events or escaped inside the JSON, reaches the worker only as [a vault key]", async () => {
  await withEndpoint("anthropic", async ({ service, task }) => {
    // As is, then with the value \u-escaped inside the input's own JSON text (escapes within a
    // string the event's JSON decodes), cut at every character, inside an escape too.
    for (const json of [INPUT_JSON, INPUT_JSON.replace(SECRET, escaped(SECRET))]) {
      const at = json.indexOf(json === INPUT_JSON ? SECRET : "\\u0073");
      const end = at + (json === INPUT_JSON ? SECRET.length : escaped(SECRET).length);
      for (let cut = at + 1; cut < end; cut++) {
        const writes = anthropicMessage([
          textBlock(0, ["Running it. "]),
          toolBlock(1, "shell", [json.slice(0, cut), json.slice(cut)]),
        ]);
        const received = await relay(service, task, writes);
        const events = readEvents(received);
        assertEquals(
          events.map((e) => e.event),
          typesOf(writes),
          `cut ${cut}: not the same events`,
        );
        assertEquals(JSON.parse(anthropicBlocks(events)[1].json), INPUT_EXPECTED, `cut ${cut}`);
        const reply = await anthropicReply(asAnswer(received));
        assertEquals(reply.calls[0].input, INPUT_EXPECTED, `cut ${cut}`);
        assertNoPart(received, `cut ${cut}`);
      }
    }
  });
});

Deno.test("a vault value in an OpenAI tool call's arguments, split across chunks or escaped inside them, reaches the worker only as [a vault key]", async () => {
  await withEndpoint("openai", async ({ service, task }) => {
    for (const json of [INPUT_JSON, INPUT_JSON.replace(SECRET, escaped(SECRET))]) {
      const at = json.indexOf(json === INPUT_JSON ? SECRET : "\\u0073");
      for (let cut = at + 1; cut < at + SECRET.length; cut++) {
        const writes = openaiChunks(["Running it. "], [{
          name: "shell",
          arguments: [json.slice(0, cut), json.slice(cut)],
        }]);
        const received = await relay(service, task, writes);
        const events = readEvents(received);
        assertEquals(events.length, readEvents(writes.join("")).length, `cut ${cut}`);
        assertEquals(JSON.parse(openaiParts(events).args[0]), INPUT_EXPECTED, `cut ${cut}`);
        const reply = await openaiReply(asAnswer(received));
        assertEquals(reply.calls[0].input, INPUT_EXPECTED, `cut ${cut}`);
        assertNoPart(received, `cut ${cut}`);
      }
    }
  });
});
