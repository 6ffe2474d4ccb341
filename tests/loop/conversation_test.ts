/** The loop's conversation rebuilt from step data: what a restarted worker carries on from. */
import { assertEquals } from "../assert.ts";
import { callKey, type Message, resume, turnsIn } from "../../mod/loop/mod.ts";
import { unansweredCalls } from "../../mod/loop/conversation.ts";

const turn: Message = {
  role: "assistant",
  text: "two calls",
  calls: [{ id: "a", name: "clock", input: {} }, { id: "b", name: "clock", input: {} }],
};

function step(message: Message): { data: unknown } {
  return { data: { loop: { messages: [message] } } };
}

Deno.test("resume: the prompt, then each step's messages; steps without loop data are skipped", () => {
  const messages = resume("do it", [{ data: null }, step(turn), { data: { line: 3 } }]);
  assertEquals(messages, [{ role: "user", text: "do it" }, turn]);
  assertEquals(turnsIn(messages), 1);
});

Deno.test("resume: per-call result steps form one tool message, and only unanswered calls remain", () => {
  const first: Message = { role: "tool", results: [{ id: "a", content: "1" }] };
  const messages = resume("p", [step(turn), step(first)]);
  assertEquals(unansweredCalls(messages).map((c) => c.id), ["b"]);
  const both = resume("p", [
    step(turn),
    step(first),
    step({ role: "tool", results: [{ id: "b", content: "2" }] }),
  ]);
  assertEquals(both[2], {
    role: "tool",
    results: [{ id: "a", content: "1" }, { id: "b", content: "2" }],
  });
  assertEquals(unansweredCalls(both), []);
});

Deno.test("call keys are stable per turn and call, and differ between calls", () => {
  assertEquals(callKey(2, 1), "loop.2.1");
  assertEquals(new Set([callKey(1, 0), callKey(1, 1), callKey(2, 0)]).size, 3);
});
