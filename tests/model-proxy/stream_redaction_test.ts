/**
 * A streamed answer reaches the client with every vault value replaced, in each of the three
 * formats, as a client reads it: a value whole in one delta, split across two events, spelled with
 * JSON escapes and split, and inside a tool call's input. The redaction is the vault's own.
 */
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";
import {
  anthropicEvents,
  anthropicToolEvents,
  chatChunks,
  chatToolChunks,
  responsesEvents,
  responsesToolEvents,
  streamed,
} from "./fake_services.ts";
import { type ProxyTest, withProxy } from "./proxy_kit.ts";

const SECRET = "sk-stream-canary-4d2e9f1a7b6c";
const HALVES = [SECRET.slice(0, 12), SECRET.slice(12)];
const redaction = () => answerRedaction(Redactor.forValues([SECRET]));

/** Each half of the secret written with \u escapes, inside the events' JSON strings. */
function escaped(events: string[]): string[] {
  const escape = (text: string) =>
    [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  return events.map((event) =>
    HALVES.reduce((written, half) => written.replaceAll(half, escape(half)), event)
  );
}

/** How each case writes the texts a format's builder puts into deltas. */
const CASES: { name: string; deltas: string[]; write?: (events: string[]) => string[] }[] = [
  { name: "whole in one delta", deltas: [`here: ${SECRET} end`] },
  { name: "split across two events", deltas: [`here: ${HALVES[0]}`, `${HALVES[1]} end`] },
  {
    name: "split inside JSON-escaped deltas",
    deltas: [`here: ${HALVES[0]}`, `${HALVES[1]} end`],
    write: escaped,
  },
];

/** A tool call's input, the secret split across its deltas and one half escaped. */
const TOOL_INPUT = [`{"command": "echo ${HALVES[0]}`, `${HALVES[1]}"}`];

interface Format {
  name: string;
  post(t: ProxyTest, body: unknown): Promise<Response>;
  answer(t: ProxyTest, events: string[]): void;
  path: string;
  body: Record<string, unknown>;
  text(deltas: string[]): string[];
  tool(deltas: string[]): string[];
}

const FORMATS: Format[] = [
  {
    name: "Messages",
    post: (t, body) => t.anthropicPost("/v1/messages", body),
    answer: (t, events) => t.anthropic.answer(streamed(events)),
    path: "/v1/messages",
    body: { model: "claude-sonnet-4-5", max_tokens: 100, messages: [] },
    text: (deltas) => anthropicEvents("claude-sonnet-4-5", deltas),
    tool: (deltas) => anthropicToolEvents("claude-sonnet-4-5", deltas),
  },
  {
    name: "Chat Completions",
    post: (t, body) => t.openaiPost("/v1/chat/completions", body),
    answer: (t, events) => t.openai.answer(streamed(events)),
    path: "/v1/chat/completions",
    body: { model: "gpt-5", messages: [] },
    text: (deltas) => chatChunks("gpt-5", deltas),
    tool: (deltas) => chatToolChunks("gpt-5", deltas),
  },
  {
    name: "Responses",
    post: (t, body) => t.openaiPost("/v1/responses", body),
    answer: (t, events) => t.openai.answer(streamed(events)),
    path: "/v1/responses",
    body: { model: "gpt-5", input: "hi" },
    text: (deltas) => responsesEvents("gpt-5", deltas),
    tool: (deltas) => responsesToolEvents("gpt-5", deltas),
  },
];

/** Every string a client joins across events, by its field's name, decoded. */
function joinedFields(sse: string): Map<string, string> {
  const joined = new Map<string, string>();
  const walk = (value: unknown) => {
    if (typeof value !== "object" || value === null) return;
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === "string") joined.set(key, (joined.get(key) ?? "") + item);
      else walk(item);
    }
  };
  for (const line of sse.split("\n")) {
    if (line.startsWith("data: ") && line !== "data: [DONE]") walk(JSON.parse(line.slice(6)));
  }
  return joined;
}

/** Asserts the client's stream holds no form of the secret, the marker in its place, no cut. */
function assertRedacted(sse: string, events: number): void {
  assertNotIncludes(sse, "model_answer_unreadable");
  assertEquals(sse.split("\n\n").length - 1, events, "every event arrives");
  for (const [field, text] of joinedFields(sse)) {
    assert(!text.includes(SECRET), `the vault value reached the client in ${field}`);
  }
  assertNotIncludes(sse, HALVES[0]);
  assertStringIncludes(sse, "[a vault key]");
}

for (const format of FORMATS) {
  for (const { name, deltas, write } of CASES) {
    Deno.test(`a vault value ${name} of a streamed ${format.name} text is replaced, and the answer metered`, async () => {
      await withProxy(async (t) => {
        const events = (write ?? ((e) => e))(format.text(deltas));
        format.answer(t, events);
        const answer = await format.post(t, { ...format.body, stream: true });
        assertEquals(answer.status, 200);
        assertRedacted(await answer.text(), events.length);
        await t.usageReports(1);
        assertEquals(t.usage.map((u) => [u.path, u.tokens.output > 0]), [[format.path, true]]);
        assertEquals(t.proxy.active, 0);
      }, { redaction });
    });
  }

  Deno.test(`a vault value split across a streamed ${format.name} tool call's input is replaced`, async () => {
    await withProxy(async (t) => {
      const events = escaped(format.tool(TOOL_INPUT)).map((event) =>
        // Only the second half escaped: the first stays as it is, with its quote before it.
        event.replaceAll(escaped([HALVES[0]])[0], HALVES[0])
      );
      format.answer(t, events);
      const answer = await format.post(t, { ...format.body, stream: true });
      assertRedacted(await answer.text(), events.length);
      await t.usageReports(1);
    }, { redaction });
  });
}
