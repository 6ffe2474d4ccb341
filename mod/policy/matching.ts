/**
 * Matching (docs/grants.md#matching): which grants cover a call, why the others drop out, which
 * one wins and what label the result carries. Pure: the time and the taint are arguments.
 */
import type { ToolArgs } from "./arguments.ts";
import { hostMatches, pathInside } from "./forms.ts";
import type { Grant } from "./grant_file.ts";
import type { GrantSet } from "./grant_set.ts";
import { hostPortMatches, pathPatternMatches } from "./http_request.ts";
import { classRank, type DenyReason, higherClass, type Label, type SessionState } from "./types.ts";

/** Why a candidate grant is left or ruled out: the first of expiry, taint and cover that fails. */
export type Verdict = "left" | "expired" | "taint_too_high" | "not_covered";

/** One grant for the call's tool, and what matching made of it. */
export type Candidate = {
  readonly grant: Grant;
  readonly verdict: Verdict;
  /** The longest of the grant's paths (http.request: path patterns) that covers the call. */
  readonly matchedPath: string | null;
};

/** The grant that won, the path it matched, and the label combined over every grant left. */
export type Winner = { grant: Grant; matchedPath: string | null; label: Label };

/** What matching found: the candidates in id order, and a winner or the reason there is none. */
export type Match = {
  candidates: Candidate[];
  result: { kind: "winner"; winner: Winner } | { kind: "none"; reason: DenyReason };
};

const MODE_RANK = { deny: 0, ask: 1, auto: 2 } as const;

/**
 * Runs matching for one call to `tool` with parsed `args`, among `grants`, at `state`'s taint, at
 * `now`.
 */
export function matchGrants(
  call: { tool: string; args: ToolArgs },
  options: { grants: GrantSet; state: SessionState; now: Date },
): Match {
  const { tool, args } = call;
  const { grants } = options;
  const now = options.now.getTime();
  const taint = classRank(options.state.taint);
  const candidates: Candidate[] = [];
  let onlyExpired = false;
  let onlyTaint = false;
  let best: Candidate | null = null;
  let resultClass: Label["resultClass"] | null = null;
  let untrusted = false;
  for (const grant of grants.byTool.get(tool) ?? []) {
    const expired = grant.expires !== null && now >= grant.expires.getTime();
    const tooTainted = taint > classRank(grant.maxTaint);
    const cover = coverOf(grant, args);
    const verdict: Verdict = expired
      ? "expired"
      : tooTainted
      ? "taint_too_high"
      : cover.covered
      ? "left"
      : "not_covered";
    const candidate = { grant, verdict, matchedPath: cover.matchedPath };
    candidates.push(candidate);
    if (verdict === "left") {
      resultClass = resultClass === null
        ? grant.resultClass
        : higherClass(resultClass, grant.resultClass);
      untrusted = untrusted || grant.untrusted;
      if (best === null || beats(candidate, best)) best = candidate;
    } else if (cover.covered && expired && !tooTainted) {
      onlyExpired = true;
    } else if (cover.covered && tooTainted && !expired) {
      onlyTaint = true;
    }
  }
  if (best === null || resultClass === null) {
    const reason: DenyReason = onlyExpired
      ? "grant_expired"
      : onlyTaint
      ? "taint_too_high"
      : "no_grant";
    return { candidates, result: { kind: "none", reason } };
  }
  const label = { resultClass, untrusted };
  const winner = { grant: best.grant, matchedPath: best.matchedPath, label };
  return { candidates, result: { kind: "winner", winner } };
}

/**
 * Whether `a` beats the current best `b`: the more restrictive mode, then the longer matched path.
 * Grants arrive in id order, so an equal candidate never beats the earlier one (ties by lowest id).
 */
function beats(a: Candidate, b: Candidate): boolean {
  const modeA = MODE_RANK[a.grant.mode];
  const modeB = MODE_RANK[b.grant.mode];
  if (modeA !== modeB) return modeA < modeB;
  const lengthA = a.matchedPath === null ? -1 : a.matchedPath.length;
  const lengthB = b.matchedPath === null ? -1 : b.matchedPath.length;
  return lengthA > lengthB;
}

/**
 * Whether a grant's constraints cover the arguments (the table of docs/grants.md#matching), and
 * through which path.
 */
function coverOf(grant: Grant, args: ToolArgs): { covered: boolean; matchedPath: string | null } {
  switch (args.kind) {
    case "read_file":
      return longestContaining(grant.paths, args.path, false);
    case "write_file":
      return longestContaining(grant.paths, args.path, true);
    case "shell":
      if (args.cwd === null) return { covered: grant.paths.length === 0, matchedPath: null };
      return longestContaining(grant.paths, args.cwd, false);
    case "http_fetch":
      return {
        covered: grant.hosts.some((pattern) => hostMatches(args.host, pattern)),
        matchedPath: null,
      };
    case "http_request": {
      const host = grant.hosts.some((pattern) => hostPortMatches(args.host, pattern));
      const methods = grant.methods ?? [];
      const method = methods.length === 0 || methods.includes(args.method);
      if (!host || !method) return { covered: false, matchedPath: null };
      if (grant.paths.length === 0) return { covered: true, matchedPath: null };
      let matched: string | null = null;
      for (const pattern of grant.paths) {
        if (!pathPatternMatches(args.segments, pattern)) continue;
        if (matched === null || pattern.length > matched.length) matched = pattern;
      }
      return { covered: matched !== null, matchedPath: matched };
    }
    case "app":
      return { covered: true, matchedPath: null };
  }
}

function longestContaining(
  paths: readonly string[],
  path: string,
  notItself: boolean,
): { covered: boolean; matchedPath: string | null } {
  let matched: string | null = null;
  for (const dir of paths) {
    if (notItself && dir === path) continue;
    if (pathInside(path, dir) && (matched === null || dir.length > matched.length)) matched = dir;
  }
  return { covered: matched !== null, matchedPath: matched };
}
