/**
 * The property test: fast-check drives `decide` with generated grant sets, taints and requests,
 * against a deliberately naive oracle written here from the prose of docs/grants.md#matching.
 * fast-check prints the seed and the shrunk counterexample on failure; rerun with `{ seed, path }`
 * to replay it.
 */
import fc from "fast-check";
import {
  buildGrantSet,
  type DataClass,
  decide,
  Decision,
  type GrantSet,
  type Outcome,
  raisedState,
  redecide,
  type SessionState,
  type ToolRequest,
} from "../../mod/policy/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { NOW } from "./helpers.ts";
import { grant, type GrantSpec } from "../kit/mod.ts";
import { standardRegistry } from "../../mod/tools/mod.ts";

/** The app tools of a standard box, as the core passes them. */
const APP_TOOLS = standardRegistry().appToolNames();

// --- Generators. A small alphabet so that paths and hosts collide often. ---

const component = fc.constantFrom("a", "b", "ab");
const grantPath = fc.array(component, { minLength: 1, maxLength: 3 }).map((c) => "/" + c.join("/"));
const argPath = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.array(component, { minLength: 1, maxLength: 4 }).map((c) => "/" + c.join("/")),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("/a/../b", "a/b", "/a//b", "/a/./b", "/a/", "/", "", "/a\u0000"),
  },
);
const label = fc.constantFrom("a", "b", "ex");
const hostName = fc.tuple(
  fc.array(label, { minLength: 1, maxLength: 2 }),
  fc.constantFrom("com", "org"),
)
  .map(([labels, tld]) => [...labels, tld].join("."));
const hostPattern = fc.tuple(fc.boolean(), hostName).map((
  [wild, host],
) => (wild ? `*.${host}` : host));
const url = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.tuple(hostName, fc.constantFrom("", "/", "/p?q=1", ":443/x")).map(([h, rest]) =>
      `https://${h}${rest}`
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "http://a.com/",
      "https://u@a.com/",
      "https://a.com:8443/",
      "https://A.com/",
      "https://127.0.0.1/",
      "https://a.com/ x",
    ),
  },
);
const dataClass = fc.constantFrom<DataClass>("public", "private", "secret");
const TOOLS = ["read_file", "write_file", "shell", "http_fetch", "example.spend"] as const;
// Mostly none; otherwise a millisecond before, exactly at, or a millisecond after NOW.
const expiry = fc.oneof(
  { weight: 5, arbitrary: fc.constant(undefined) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "2026-10-01T11:59:59.999Z",
      "2026-10-01T12:00:00.000Z",
      "2026-10-01T12:00:00.001Z",
    ),
  },
);

const grantSpec: fc.Arbitrary<GrantSpec> = fc.record({
  tool: fc.constantFrom(...TOOLS),
  mode: fc.constantFrom("auto", "ask", "deny" as const),
  max_taint: fc.oneof({ weight: 1, arbitrary: dataClass }, {
    weight: 1,
    arbitrary: fc.constant("secret" as const),
  }),
  result_class: dataClass,
  untrusted: fc.boolean(),
  expires: expiry,
  paths: fc.array(grantPath, { minLength: 1, maxLength: 3 }),
  shellPaths: fc.array(grantPath, { maxLength: 2 }),
  hosts: fc.array(hostPattern, { minLength: 1, maxLength: 2 }),
}).map(({ tool, mode, max_taint, result_class, untrusted, expires, paths, shellPaths, hosts }) => ({
  tool,
  mode,
  // Loading rule 9: a deny grant applies at every taint.
  max_taint: mode === "deny" ? "secret" : max_taint,
  result_class,
  untrusted,
  expires,
  paths: tool === "read_file" || tool === "write_file"
    ? paths
    : tool === "shell"
    ? shellPaths
    : undefined,
  hosts: tool === "http_fetch" ? hosts : undefined,
}));

const IDS = ["a", "b", "c", "d", "e", "aa", "b-1", "z"];
const specs = fc.uniqueArray(fc.tuple(fc.constantFrom(...IDS), grantSpec), {
  minLength: 1,
  maxLength: 6,
  selector: ([id]) => id,
});

/** Requests for each tool, with paths and hosts drawn also from the grants' own, to collide. */
function requestsFor(
  paths: fc.Arbitrary<string>,
  hosts: fc.Arbitrary<string>,
): Record<string, fc.Arbitrary<ToolRequest>> {
  const urls = fc.oneof(
    { weight: 1, arbitrary: url },
    { weight: 3, arbitrary: hosts.map((h) => `https://${h}/x`) },
  );
  return {
    read_file: paths.map((path) => ({ tool: "read_file", arguments: { path } })),
    write_file: fc.tuple(paths, fc.string({ maxLength: 3 })).map(([path, content]) => ({
      tool: "write_file",
      arguments: { path, content },
    })),
    shell: fc.option(paths, { nil: undefined }).map((cwd) => ({
      tool: "shell",
      arguments: cwd === undefined ? { command: "ls" } : { command: "ls", cwd },
    })),
    http_fetch: urls.map((u) => ({ tool: "http_fetch", arguments: { url: u } })),
    "example.spend": fc.constant({ tool: "example.spend", arguments: { amount: 1 } }),
  };
}

const anyRequest: fc.Arbitrary<ToolRequest> = fc.oneof(
  ...Object.values(requestsFor(argPath, hostName)),
  fc.constant({ tool: "unknown.tool", arguments: {} }),
  fc.constant({ tool: "read_file", arguments: { path: "/a", extra: true } }),
);

/** A request mostly to a tool the set has grants for, often at or under one of its paths or hosts. */
function aimedAt(entries: [string, GrantSpec][]): fc.Arbitrary<ToolRequest> {
  const tools = [...new Set(entries.map(([, spec]) => spec.tool))];
  const grantPaths = entries.flatMap(([, spec]) => spec.paths ?? []);
  const grantHosts = entries.flatMap(([, spec]) => spec.hosts ?? []);
  const paths = grantPaths.length === 0 ? argPath : fc.oneof(
    argPath,
    fc.tuple(fc.constantFrom(...grantPaths), fc.array(component, { maxLength: 2 }))
      .map(([dir, more]) => [dir, ...more].join("/")),
  );
  const hosts = grantHosts.length === 0 ? hostName : fc.oneof(
    hostName,
    fc.tuple(fc.constantFrom(...grantHosts), fc.option(label, { nil: undefined }))
      .map(([h, extra]) => {
        const bare = h.startsWith("*.") ? h.slice(2) : h;
        return extra === undefined ? bare : `${extra}.${bare}`;
      }),
  );
  const requests = requestsFor(paths, hosts);
  const aimed = fc.constantFrom(...tools).chain((tool) => requests[tool]);
  return fc.oneof({ weight: 4, arbitrary: aimed }, { weight: 1, arbitrary: anyRequest });
}

const setAndRequest: fc.Arbitrary<[[string, GrantSpec][], ToolRequest]> = specs.chain((entries) =>
  fc.tuple(fc.constant(entries), aimedAt(entries))
);

const state: fc.Arbitrary<SessionState> = fc.record({ taint: dataClass, untrusted: fc.boolean() });

function setOf(entries: [string, GrantSpec][]): GrantSet {
  const encoder = new TextEncoder();
  const files = entries.map(([id, spec]) => ({
    file: `grants/${id}.toml`,
    bytes: encoder.encode(grant(spec)),
  }));
  const load = buildGrantSet(files, { appTools: APP_TOOLS });
  if (!load.ok) throw new Error(`generated grants are invalid: ${JSON.stringify(load.problems)}`);
  return load.grants;
}

// --- The oracle: docs/grants.md#matching read literally, written without mod/policy. ---

type Summary = {
  kind: string;
  grant: string | null;
  matchedPath: string | null;
  label: string | null;
  why: string | null;
};

const RANK: Record<DataClass, number> = { public: 0, private: 1, secret: 2 };

function naivePathValid(p: string): boolean {
  if (p.length === 0 || p[0] !== "/" || p.includes("\u0000")) return false;
  if (p === "/") return true;
  return p.slice(1).split("/").every((c) => c !== "" && c !== "." && c !== "..");
}

function naiveInside(p: string, dir: string): boolean {
  const a = p.split("/");
  const b = dir.split("/");
  return b.length <= a.length && b.every((part, i) => a[i] === part);
}

function naiveHost(u: string): string | null {
  const m = /^https:\/\/([a-z0-9.-]+)(:443)?([/?#][!-~]*)?$/.exec(u);
  if (!m) return null;
  const labels = m[1].split(".");
  if (labels.length < 2) return null;
  if (labels.some((l) => l === "" || l.startsWith("-") || l.endsWith("-"))) return null;
  if (!/^[a-z]/.test(labels[labels.length - 1])) return null;
  return m[1];
}

function naiveHostMatch(host: string, pattern: string): boolean {
  if (pattern.startsWith("*.")) {
    const rest = pattern.slice(2).split(".");
    const labels = host.split(".");
    return labels.length > rest.length &&
      rest.every((l, i) => labels[labels.length - rest.length + i] === l);
  }
  return host === pattern;
}

function sameKeys(
  value: unknown,
  required: string[],
  optional: string[] = [],
): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return required.every((k) => keys.includes(k)) &&
    keys.every((k) => required.includes(k) || optional.includes(k));
}

function oracle(
  req: ToolRequest,
  grants: [string, GrantSpec][],
  st: SessionState,
  overBudget: boolean,
): Summary {
  return oracleAt(req, grants, st, NOW, overBudget);
}

function oracleAt(
  req: ToolRequest,
  grants: [string, GrantSpec][],
  st: SessionState,
  when: Date,
  overBudget = false,
): Summary {
  const deny = (reason: string, grant: string | null = null): Summary => ({
    kind: `denied ${reason}`,
    grant,
    matchedPath: null,
    label: null,
    why: null,
  });
  const a = req.arguments as Record<string, unknown>;
  // covers(spec) -> null if not covered, else the matched path ("" for none)
  let covers: (spec: GrantSpec) => string | null;
  if (req.tool === "read_file" || req.tool === "write_file") {
    const fields = req.tool === "read_file" ? ["path"] : ["path", "content"];
    if (!sameKeys(a, fields) || !fields.every((f) => typeof a[f] === "string")) {
      return deny("invalid_arguments");
    }
    const p = a.path as string;
    if (!naivePathValid(p)) return deny("invalid_arguments");
    covers = (spec) => {
      const holding = (spec.paths ?? []).filter((g) =>
        naiveInside(p, g) && !(req.tool === "write_file" && g === p)
      );
      if (holding.length === 0) return null;
      return holding.reduce((x, y) => (y.length > x.length ? y : x));
    };
  } else if (req.tool === "shell") {
    if (!sameKeys(a, ["command"], ["cwd"]) || typeof a.command !== "string") {
      return deny("invalid_arguments");
    }
    const cwd = a.cwd ?? null;
    if (cwd !== null && (typeof cwd !== "string" || !naivePathValid(cwd))) {
      return deny("invalid_arguments");
    }
    covers = (spec) => {
      const paths = spec.paths ?? [];
      if (cwd === null) return paths.length === 0 ? "" : null;
      const holding = paths.filter((g) => naiveInside(cwd as string, g));
      if (holding.length === 0) return null;
      return holding.reduce((x, y) => (y.length > x.length ? y : x));
    };
  } else if (req.tool === "http_fetch") {
    if (!sameKeys(a, ["url"]) || typeof a.url !== "string") return deny("invalid_arguments");
    const host = naiveHost(a.url);
    if (host === null) return deny("invalid_arguments");
    covers = (spec) => ((spec.hosts ?? []).some((h) => naiveHostMatch(host, h)) ? "" : null);
  } else {
    covers = () => "";
  }
  const now = when.getTime();
  type Left = { id: string; spec: GrantSpec; matched: string };
  const left: Left[] = [];
  let expiredOnly = false;
  let taintOnly = false;
  for (const [id, spec] of grants) {
    if (spec.tool !== req.tool) continue;
    const expired = spec.expires !== undefined && now >= Date.parse(spec.expires);
    const tainted = RANK[st.taint] > RANK[spec.max_taint ?? "secret"];
    const matched = covers(spec);
    if (!expired && !tainted && matched !== null) left.push({ id, spec, matched });
    if (expired && !tainted && matched !== null) expiredOnly = true;
    if (!expired && tainted && matched !== null) taintOnly = true;
  }
  if (left.length === 0) {
    return deny(expiredOnly ? "grant_expired" : taintOnly ? "taint_too_high" : "no_grant");
  }
  const modeOrder = ["deny", "ask", "auto"];
  left.sort((x, y) =>
    modeOrder.indexOf(x.spec.mode ?? "auto") - modeOrder.indexOf(y.spec.mode ?? "auto") ||
    y.matched.length - x.matched.length ||
    (x.id < y.id ? -1 : 1)
  );
  const win = left[0];
  let top: DataClass = "public";
  for (const l of left) {
    if (RANK[l.spec.result_class ?? "private"] > RANK[top]) {
      top = l.spec.result_class ?? "private";
    }
  }
  const untrusted = left.some((l) => l.spec.untrusted === true);
  if (win.spec.mode === "deny") return deny("denied_by_grant", win.id);
  const base = {
    grant: win.id,
    matchedPath: win.matched === "" ? null : win.matched,
    label: `${top}/${untrusted}`,
  };
  if (win.spec.mode === "ask") return { kind: "ask", why: "grant", ...base };
  if (overBudget) return { kind: "ask", why: "budget", ...base };
  return { kind: "allowed", why: null, ...base };
}

function summarise(outcome: Outcome): Summary {
  if (outcome.kind === "denied") {
    return {
      kind: `denied ${outcome.denial.reason}`,
      grant: outcome.denial.grant,
      matchedPath: null,
      label: null,
      why: null,
    };
  }
  const call = outcome.kind === "allowed" ? outcome.decision : outcome.ask;
  return {
    kind: outcome.kind,
    grant: call.grant,
    matchedPath: call.matchedPath,
    label: `${call.label.resultClass}/${call.label.untrusted}`,
    why: outcome.kind === "ask" ? outcome.ask.why : null,
  };
}

function restrictiveness(outcome: Outcome): number {
  return outcome.kind === "allowed" ? 0 : outcome.kind === "ask" ? 1 : 2;
}

// --- The properties. ---

Deno.test("decide agrees with the naive oracle on 10,000 generated cases", () => {
  fc.assert(
    fc.property(setAndRequest, state, fc.boolean(), ([entries, req], st, overBudget) => {
      const grants = setOf(entries);
      const outcome = decide(req, { grants, state: st, now: NOW, overBudget });
      assertEquals(summarise(outcome), oracle(req, entries, st, overBudget));
      if (outcome.kind === "denied" && outcome.denial.grant !== null) {
        const sha = grants.grants.find((g) => g.id === outcome.denial.grant)?.sha256;
        assertEquals(outcome.denial.grant_sha256, sha);
      }
    }),
    { numRuns: 10_000 },
  );
});

Deno.test("redecide of an approved Ask agrees with the oracle at the state and time of approval", () => {
  const later = fc.constantFrom(
    NOW,
    new Date(NOW.getTime() + 1),
    new Date(NOW.getTime() + 86_400_000),
  );
  fc.assert(
    fc.property(
      setAndRequest,
      state,
      state,
      later,
      ([entries, req], st, st2, when) => {
        const grants = setOf(entries);
        const outcome = decide(req, { grants, state: st, now: NOW, overBudget: true });
        if (outcome.kind !== "ask") return;
        // Taint only rises between the ask and the approval.
        const atApproval = raisedState(st, { resultClass: st2.taint, untrusted: st2.untrusted });
        const again = redecide(outcome.ask, { grants, state: atApproval, now: when });
        const expected = oracleAt(req, entries, atApproval, when);
        const got = again.kind === "allowed"
          ? summarise({ kind: "allowed", decision: again.decision })
          : summarise(again);
        // ask and auto both give a Decision on approval.
        assertEquals(
          got,
          expected.kind === "ask" ? { ...expected, kind: "allowed", why: null } : expected,
        );
      },
    ),
    { numRuns: 3_000 },
  );
});

Deno.test("adding a deny grant never makes an outcome less restrictive", () => {
  const denySpec = grantSpec.map((spec) => ({
    ...spec,
    mode: "deny" as const,
    max_taint: "secret" as const,
  }));
  fc.assert(
    fc.property(
      setAndRequest,
      denySpec,
      state,
      fc.boolean(),
      ([entries, req], extra, st, overBudget) => {
        const options = { state: st, now: NOW, overBudget };
        const before = decide(req, { grants: setOf(entries), ...options });
        const with_ = [
          ...entries.filter(([id]) => id !== "zz"),
          ["zz", extra] as [string, GrantSpec],
        ];
        const after = decide(req, { grants: setOf(with_), ...options });
        assert(
          restrictiveness(after) >= restrictiveness(before),
          `${before.kind} became ${after.kind}`,
        );
      },
    ),
    { numRuns: 2_000 },
  );
});

Deno.test("a call denied_by_grant at one taint is denied_by_grant at every higher taint", () => {
  fc.assert(
    fc.property(setAndRequest, state, ([entries, req], st) => {
      const grants = setOf(entries);
      const outcome = decide(req, { grants, state: st, now: NOW });
      if (outcome.kind !== "denied" || outcome.denial.reason !== "denied_by_grant") return;
      for (const taint of ["public", "private", "secret"] as const) {
        if (RANK[taint] < RANK[st.taint]) continue;
        const higher = decide(req, { grants, state: { ...st, taint }, now: NOW });
        assert(higher.kind === "denied" && higher.denial.reason === "denied_by_grant", taint);
      }
    }),
    { numRuns: 3_000 },
  );
});

Deno.test("over a sequence of calls and approvals, taint never goes down and only Decisions run", () => {
  const setAndSteps = specs.chain((entries) =>
    fc.tuple(
      fc.constant(entries),
      fc.array(fc.tuple(aimedAt(entries), fc.boolean(), fc.boolean()), { maxLength: 8 }),
    )
  );
  fc.assert(
    fc.property(setAndSteps, ([entries, steps]) => {
      const grants = setOf(entries);
      let st: SessionState = { taint: "private", untrusted: false };
      const ran: Decision[] = [];
      const runtime = (decision: Decision): void => {
        assert(decision instanceof Decision);
        ran.push(decision);
      };
      let allowedOrApproved = 0;
      for (const [req, overBudget, approve] of steps) {
        const outcome = decide(req, { grants, state: st, now: NOW, overBudget });
        let decision: Decision | null = null;
        if (outcome.kind === "allowed") decision = outcome.decision;
        if (outcome.kind === "ask" && approve) {
          const again = redecide(outcome.ask, { grants, state: st, now: NOW });
          if (again.kind === "allowed") decision = again.decision;
        }
        if (decision === null) continue;
        allowedOrApproved++;
        runtime(decision);
        const next = raisedState(st, decision.label);
        assert(RANK[next.taint] >= RANK[st.taint], "taint went down");
        assert(next.untrusted || !st.untrusted, "untrusted was cleared");
        st = next;
      }
      assertEquals(ran.length, allowedOrApproved);
    }),
    { numRuns: 2_000 },
  );
});
