/**
 * Asks, budgets and redecide (docs/grants.md#budgets and #approvals): what an Ask carries, how an
 * approved Ask is decided again, and the canonical arguments the owner approves.
 */
import {
  type Ask,
  canonicalArguments,
  decide,
  type GrantSet,
  redecide,
  type ToolRequest,
} from "../../mod/policy/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { at, grantSet, NOW } from "./helpers.ts";

function askFor(request: ToolRequest, grants: GrantSet, overBudget = false): Ask {
  const outcome = decide(request, { grants, ...at("private", { overBudget }) });
  assert(outcome.kind === "ask", `expected ask, got ${JSON.stringify(outcome)}`);
  return outcome.ask;
}

const read = (path: string): ToolRequest => ({ tool: "read_file", arguments: { path } });
const state = { taint: "private", untrusted: false } as const;

Deno.test("an ask grant gives an Ask whose why is grant and whose expires is the grant's", () => {
  const grants = grantSet({
    ask: { tool: "read_file", mode: "ask", paths: ["/d"], expires: "2027-01-01T00:00:00Z" },
  });
  const ask = askFor(read("/d/x"), grants);
  assertEquals(ask.why, "grant");
  assertEquals(ask.grant, "ask");
  assertEquals(ask.expires?.toISOString(), "2027-01-01T00:00:00.000Z");
  assertEquals(ask.tool, "read_file");
  assertEquals(ask.args, { kind: "read_file", path: "/d/x" });
  assertEquals(ask.matchedPath, "/d");
  assertEquals(ask.grantSha256, grants.grants[0].sha256);
});

Deno.test("over budget, a call an auto grant allows becomes an Ask whose why is budget", () => {
  const grants = grantSet({ auto: { tool: "read_file", paths: ["/d"] } });
  const ask = askFor(read("/d/x"), grants, true);
  assertEquals(ask.why, "budget");
  assertEquals(ask.expires, null);
  assertEquals(
    decide(read("/d/x"), { grants, ...at("private", { overBudget: false }) }).kind,
    "allowed",
  );
});

Deno.test("over budget, an ask grant still says why grant, and a denial stays a denial", () => {
  const grants = grantSet({
    ask: { tool: "read_file", mode: "ask", paths: ["/d"] },
    no: { tool: "read_file", mode: "deny", paths: ["/d/secret"] },
  });
  assertEquals(askFor(read("/d/x"), grants, true).why, "grant");
  const denied = decide(read("/d/secret/k"), { grants, ...at("private", { overBudget: true }) });
  assert(denied.kind === "denied");
  assertEquals(denied.denial.reason, "denied_by_grant");
  const none = decide(read("/e"), { grants, ...at("private", { overBudget: true }) });
  assert(none.kind === "denied");
  assertEquals(none.denial.reason, "no_grant");
});

Deno.test("redecide turns an approved Ask into a Decision while the grant still asks", () => {
  const grants = grantSet({ ask: { tool: "read_file", mode: "ask", paths: ["/d"] } });
  const ask = askFor(read("/d/x"), grants);
  const again = redecide(ask, { grants, state, now: NOW });
  assert(again.kind === "allowed");
  assertEquals(again.decision.grant, "ask");
  assertEquals(again.decision.args, { kind: "read_file", path: "/d/x" });
  assertEquals(again.decision.matchedPath, "/d");
});

Deno.test("redecide after the grant file was removed denies with no_grant", () => {
  const ask = askFor(
    read("/d/x"),
    grantSet({ ask: { tool: "read_file", mode: "ask", paths: ["/d"] } }),
  );
  const again = redecide(ask, { grants: grantSet({}), state, now: NOW });
  assertEquals(again, {
    kind: "denied",
    denial: { reason: "no_grant", grant: null, grant_sha256: null },
  });
});

Deno.test("redecide after the taint rose past max_taint denies with taint_too_high", () => {
  const grants = grantSet({
    ask: { tool: "read_file", mode: "ask", paths: ["/d"], max_taint: "private" },
  });
  const ask = askFor(read("/d/x"), grants);
  const again = redecide(ask, { grants, state: { taint: "secret", untrusted: false }, now: NOW });
  assert(again.kind === "denied");
  assertEquals(again.denial.reason, "taint_too_high");
});

Deno.test("redecide after the grant expired denies with grant_expired", () => {
  const grants = grantSet({
    ask: { tool: "read_file", mode: "ask", paths: ["/d"], expires: "2026-10-01T12:05:00Z" },
  });
  const ask = askFor(read("/d/x"), grants);
  const later = new Date("2026-10-01T12:05:00Z");
  const again = redecide(ask, { grants, state, now: later });
  assert(again.kind === "denied");
  assertEquals(again.denial.reason, "grant_expired");
});

Deno.test("redecide after a deny grant was added denies with that grant", () => {
  const ask = askFor(
    read("/d/x"),
    grantSet({ ask: { tool: "read_file", mode: "ask", paths: ["/d"] } }),
  );
  const now = grantSet({
    ask: { tool: "read_file", mode: "ask", paths: ["/d"] },
    stop: { tool: "read_file", mode: "deny", paths: ["/d/x"] },
  });
  const again = redecide(ask, { grants: now, state, now: NOW });
  assert(again.kind === "denied");
  assertEquals(again.denial.reason, "denied_by_grant");
  assertEquals(again.denial.grant, "stop");
  assertEquals(again.denial.grant_sha256, now.grants.find((g) => g.id === "stop")?.sha256);
});

Deno.test("redecide records the grant matched now when it differs from the one that asked", () => {
  const ask = askFor(
    read("/d/x"),
    grantSet({ asked: { tool: "read_file", mode: "ask", paths: ["/d"] } }),
  );
  const now = grantSet({ later: { tool: "read_file", mode: "auto", paths: ["/d/x"] } });
  const again = redecide(ask, { grants: now, state, now: NOW });
  assert(again.kind === "allowed");
  assertEquals(again.decision.grant, "later");
  assertEquals(again.decision.matchedPath, "/d/x");
});

Deno.test("a budget Ask approved by the owner gives a Decision while matching still allows", () => {
  const grants = grantSet({ auto: { tool: "read_file", paths: ["/d"], result_class: "secret" } });
  const ask = askFor(read("/d/x"), grants, true);
  const again = redecide(ask, { grants, state, now: NOW });
  assert(again.kind === "allowed");
  assertEquals(again.decision.label, { resultClass: "secret", untrusted: false });
});

Deno.test("canonical arguments: fields in the table's order, compact, an absent cwd left out", () => {
  const grants = grantSet({
    s: { tool: "shell", mode: "ask" },
    sc: { tool: "shell", mode: "ask", paths: ["/etc"] },
    w: { tool: "write_file", mode: "ask", paths: ["/etc"] },
    h: { tool: "http_fetch", mode: "ask", hosts: ["example.com"] },
  });
  const cases: [ToolRequest, string][] = [
    [{ tool: "shell", arguments: { command: "ls" } }, '{"command":"ls"}'],
    [{ tool: "shell", arguments: { cwd: null, command: "ls" } }, '{"command":"ls"}'],
    [
      { tool: "shell", arguments: JSON.parse('{"cwd":"\\u002fetc","command":"ls"}') },
      '{"command":"ls","cwd":"/etc"}',
    ],
    [
      { tool: "write_file", arguments: { content: "a\nb", path: "/etc/x" } },
      '{"path":"/etc/x","content":"a\\nb"}',
    ],
    [
      { tool: "http_fetch", arguments: { url: "https://example.com/a" } },
      '{"url":"https://example.com/a"}',
    ],
  ];
  for (const [request, expected] of cases) {
    assertEquals(canonicalArguments(askFor(request, grants)), expected);
  }
});

Deno.test("a Decision's arguments are frozen: what was decided is what runs", () => {
  const input = { amount: 5 };
  const grants = grantSet({ spend: { tool: "example.spend" } });
  const outcome = decide({ tool: "example.spend", arguments: input }, { grants, ...at() });
  assert(outcome.kind === "allowed");
  input.amount = 500;
  assertEquals(canonicalArguments(outcome.decision), '{"amount":5}');
  assert(Object.isFrozen(outcome.decision.args));
});
