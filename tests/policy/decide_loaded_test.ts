/**
 * decideLoaded holds the order of docs/grants.md#how-a-call-is-decided for what is found before
 * matching: an invalid grant set, then an unreadable state, a tool the session was not given, an
 * input its schema refused; and denialText answers `not approved` for a refused or expired spend
 * over budget only (docs/grants.md#budgets).
 */
import {
  decideLoaded,
  denialText,
  type DenyReason,
  type GrantLoad,
  type LoadedOptions,
  type ToolRequest,
} from "../../mod/policy/mod.ts";
import { assertEquals } from "../assert.ts";
import { grantSet, NOW } from "./helpers.ts";

const valid: GrantLoad = {
  ok: true,
  grants: grantSet({ notes: { tool: "read_file", paths: ["/home/kyle/notes"] } }),
};
const invalid: GrantLoad = { ok: false, problems: [{ file: "x.toml", line: null, problem: "x" }] };
const read: ToolRequest = { tool: "read_file", arguments: { path: "/home/kyle/notes/a.md" } };
const state = { taint: "private" as const, untrusted: false };

function outcome(load: GrantLoad, options: Partial<LoadedOptions>): string {
  const decided = decideLoaded(read, { load, state, now: NOW, ...options });
  return decided.kind === "denied" ? decided.denial.reason : decided.kind;
}

Deno.test("decideLoaded: grants_invalid before state_unreadable before no_grant before invalid_arguments, then the grants", () => {
  const facts: [boolean, boolean, boolean, boolean][] = [];
  for (const ok of [true, false]) {
    for (const readable of [true, false]) {
      for (const offered of [true, false]) {
        for (const inputValid of [true, false]) facts.push([ok, readable, offered, inputValid]);
      }
    }
  }
  for (const [ok, readable, offered, inputValid] of facts) {
    const expected: DenyReason | "allowed" = !ok
      ? "grants_invalid"
      : !readable
      ? "state_unreadable"
      : !offered
      ? "no_grant"
      : !inputValid
      ? "invalid_arguments"
      : "allowed";
    const got = outcome(ok ? valid : invalid, {
      state: readable ? state : null,
      offered,
      inputValid,
    });
    assertEquals(got, expected, JSON.stringify({ ok, readable, offered, inputValid }));
  }
  assertEquals(outcome(valid, {}), "allowed", "offered and inputValid default to true");
  assertEquals(outcome(valid, { overBudget: true }), "ask");
});

Deno.test("denialText: a refused or expired spend over budget is `not approved`; every other denial keeps its text", () => {
  assertEquals(denialText("approval_refused", { askedFor: "budget" }), "not approved");
  assertEquals(denialText("approval_expired", { askedFor: "budget" }), "not approved");
  assertEquals(
    denialText("approval_refused", { askedFor: "grant" }),
    "Denied: the owner refused this call.",
  );
  assertEquals(
    denialText("audit_unavailable", { askedFor: "budget" }),
    denialText("audit_unavailable"),
  );
  assertEquals(denialText("no_grant", { askedFor: "budget" }), denialText("no_grant"));
});
