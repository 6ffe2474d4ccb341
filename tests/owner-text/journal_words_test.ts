/**
 * The journal's words (mod/owner-text/journal_words.ts) and approve's answer: a refusal of the
 * model endpoint names its service and path (issue 28), the egress proxy's its host and port, and
 * every field a task chose is one line of data.
 */
import { assertEquals } from "../assert.ts";
import {
  answerText,
  approvalBlock,
  blockedText,
  centsText,
  journalWords,
} from "../../mod/owner-text/mod.ts";

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
    'result k t {"s":"\\u00ad"} cost $0.00',
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
  assertEquals(words.endsWith("), at most $0.07"), true, words);
  assertEquals(
    journalWords({ ...hold, model: null }),
    "hold 0123456789abcdef: anthropic /v1/messages (no model named), at most $0.07",
  );
  assertEquals(
    journalWords({ type: "model.settled", time: TIME, hold: "0123456789abcdef" }),
    "hold 0123456789abcdef settled, no whole cent charged",
  );
  assertEquals(
    journalWords({ type: "model.owed", time: TIME, hold: "0123456789abcdef", cents: 300 }),
    "hold 0123456789abcdef: $3.00 the audit log could not take, charged at the next start",
  );
});

Deno.test("journal events read as sentences: a waiting approval, and a blocked host with its reason in words", () => {
  const pending = {
    type: "event",
    time: TIME,
    event: "approval_pending",
    detail: { approval: 10, tool: "example.spend", expires: "2026-12-03T12:15:00.000Z" },
  };
  assertEquals(
    journalWords(pending),
    "approval 10 is waiting: example.spend, until 2026-12-03T12:15:00.000Z",
  );
  const blocked = {
    type: "event",
    time: TIME,
    event: "net.blocked",
    detail: { task: "t1", host: "api.example.com", port: 443, reason: "not_listed" },
  };
  assertEquals(journalWords(blocked), "blocked api.example.com:443 (not on the task's list)");
  // A reason of no known kind is shown as it came, as data.
  const odd = { ...blocked, detail: { ...blocked.detail, reason: "new_kind\n" } };
  assertEquals(journalWords(odd), "blocked api.example.com:443 (new_kind\\n)");
  // A damaged line, as the core's follower hands it on, is said as such, not as JSON.
  assertEquals(
    journalWords({ type: "event", time: "", event: "unreadable", detail: null }),
    "a journal line that is not JSON (damaged or cut short)",
  );
  // gurt task watch keeps the reason's code (blockedText without words).
  assertEquals(blockedText(blocked.detail), "api.example.com:443 (not_listed)");
});

Deno.test("money reads as dollars and cents: a call's cost, a result, a charge and an approval's block", () => {
  assertEquals(centsText(1999), "$19.99");
  assertEquals(centsText(0), "$0.00");
  assertEquals(centsText(5), "$0.05");
  assertEquals(centsText(0.6), "$0.0060");
  assertEquals(
    journalWords({ type: "cost", time: TIME, cents: 1999, what: "example.spend" }),
    "cost $19.99 example.spend",
  );
  const block = approvalBlock({
    approval: 7,
    task: "t1",
    key: "k",
    kind: "grant",
    tool: "example.spend",
    arguments: '{"cents":1999}',
    grant: "spend",
    taint: "private",
    costCents: 1999,
    created: TIME,
    expires: "2026-12-03T12:15:00.000Z",
  }, new Date(TIME));
  assertEquals(block.includes("cost $19.99  taint private"), true, block);
  assertEquals(block.includes("¢"), false, block);
});
