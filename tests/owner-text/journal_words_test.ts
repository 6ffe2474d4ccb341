/**
 * The journal's words (mod/owner-text/journal_words.ts) and approve's answer: a refusal of the
 * model endpoint names its service and path (issue 28), the egress proxy's its host and port, and
 * every field a task chose is one line of data.
 */
import { assertEquals } from "../assert.ts";
import { answerText, blockedText, journalWords } from "../../mod/owner-text/mod.ts";

const TIME = "2026-12-03T12:00:00.000Z";

Deno.test("a model endpoint's Factory refusal reads `blocked factory PATH (factory_path)`, not undefined:undefined", () => {
  const detail = { service: "factory", path: "/api/sessions/x", reason: "factory_path", at: "" };
  assertEquals(
    journalWords({ type: "event", time: TIME, event: "net.blocked", detail }),
    "blocked factory /api/sessions/x (factory_path)",
  );
  assertEquals(
    blockedText({
      service: "openai",
      path: "/v1/responses",
      reason: "server_tool",
      at: "tools[0]",
    }),
    "openai /v1/responses (server_tool at tools[0])",
  );
  assertEquals(
    blockedText({ host: "evil.example", port: 443, reason: "not_listed" }),
    "evil.example:443 (not_listed)",
  );
});

Deno.test("a path, a key and a question a task chose are shown on one line, escaped", () => {
  const detail = {
    service: "factory",
    path: "/a\n  12:00:02 result",
    reason: "factory_path",
    at: "",
  };
  assertEquals(
    blockedText(detail),
    "factory /a\\n  12:00:02 result (factory_path)",
  );
  assertEquals(
    journalWords({ type: "ask", time: TIME, key: "q\u202e1", approval: 4, question: "a\nb\u061c" }),
    "ask q\\u202e1 approval 4: a\\nb\\u061c",
  );
  assertEquals(
    journalWords({
      type: "tool.result",
      time: TIME,
      key: "k",
      tool: "t",
      answer: { s: "\u00ad" },
      cost: 0,
    }),
    'result k t {"s":"\\u00ad"} cost 0¢',
  );
});

Deno.test("approve's answer shows the core's error and a denial's reason as one line each", () => {
  const error = answerText({ ok: false, status: 400, error: "bad\nrefused 41", code: null }, {
    id: 41,
    action: "approve",
  });
  assertEquals(error.text, "41: bad\\nrefused 41");
  const denied = answerText(
    { ok: true, value: { outcome: { outcome: "denied", reason: "no_grant\n\u202e" } } },
    { id: 41, action: "approve" },
  );
  assertEquals(denied.text, "approved 41: denied (no_grant\\n\\u202e)");
});

Deno.test("a model request's hold, its settling and its owed cents read as words, a model name a task chose on one line", () => {
  const hold = {
    type: "model.hold",
    time: TIME,
    hold: "0123456789abcdef",
    service: "anthropic",
    model: "claude\n  12:00:02 cost 0¢ model",
    path: "/v1/messages",
    cents: 7,
  };
  const words = journalWords(hold);
  assertEquals(words.includes("\n"), false, words);
  assertEquals(words.startsWith("hold 0123456789abcdef: anthropic /v1/messages ("), true, words);
  assertEquals(words.endsWith("), at most 7¢"), true, words);
  assertEquals(
    journalWords({ ...hold, model: null }),
    "hold 0123456789abcdef: anthropic /v1/messages (no model named), at most 7¢",
  );
  assertEquals(
    journalWords({ type: "model.settled", time: TIME, hold: "0123456789abcdef" }),
    "hold 0123456789abcdef settled, no whole cent charged",
  );
  assertEquals(
    journalWords({ type: "model.owed", time: TIME, hold: "0123456789abcdef", cents: 300 }),
    "hold 0123456789abcdef: 300¢ the audit log could not take, charged at the next start",
  );
});
