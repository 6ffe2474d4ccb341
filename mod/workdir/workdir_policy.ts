/**
 * Which of the owner's folders a task may be given as a workdir (docs/grants.md#taskworkdir): the
 * grants whose tool is `task.workdir` decide it, as any grant decides a call. Pure: the grants, the
 * task's taint and the time are arguments.
 */
import {
  classRank,
  type DataClass,
  type DenyReason,
  type Grant,
  type Mode,
  pathInside,
  pathProblem,
  WORKDIR_TOOL,
} from "../policy/mod.ts";

/** One workdir a task asks for: the folder, and whether it is read-only (`PATH:ro`). */
export interface WorkdirRequest {
  path: string;
  readOnly: boolean;
}

/** How one workdir was decided: the winning grant and its mode, or why it was refused. */
export type WorkdirVerdict =
  | { outcome: "allowed" | "ask"; grant: Grant; matchedPath: string }
  | { outcome: "denied"; reason: DenyReason; grant: Grant | null };

/**
 * Parses one `--workdir` value: an absolute path, with `:ro` at its end for a read-only one. Throws
 * with a sentence naming the value when the path is not valid (docs/grants.md#paths-hosts-and-urls).
 */
export function parseWorkdir(value: string): WorkdirRequest {
  const readOnly = value.endsWith(":ro");
  const path = readOnly ? value.slice(0, -3) : value.endsWith(":rw") ? value.slice(0, -3) : value;
  const problem = path === "/" ? "is the whole file system" : pathProblem(path);
  if (problem !== null) {
    throw new Error(`--workdir ${JSON.stringify(value)}: the path ${problem}`);
  }
  return { path, readOnly };
}

/**
 * Decides one workdir against the grants: the `task.workdir` grants that have not expired, whose
 * max_taint is at or above the task's taint and one of whose paths holds the folder; the most
 * restrictive mode wins (deny, ask, auto), then the longest matched path. None: `no_grant`.
 */
export function decideWorkdir(
  grants: readonly Grant[],
  request: WorkdirRequest,
  at: { taint: DataClass; now: Date },
): WorkdirVerdict {
  if (pathProblem(request.path) !== null || request.path === "/") {
    return { outcome: "denied", reason: "invalid_arguments", grant: null };
  }
  let best: { grant: Grant; matchedPath: string } | null = null;
  let ruledOut: DenyReason = "no_grant";
  for (const grant of grants) {
    if (grant.tool !== WORKDIR_TOOL) continue;
    const matched = grant.paths.filter((path) => pathInside(request.path, path))
      .sort((a, b) => b.length - a.length)[0];
    if (matched === undefined) continue;
    if (grant.expires !== null && at.now.getTime() >= grant.expires.getTime()) {
      if (ruledOut === "no_grant") ruledOut = "grant_expired";
      continue;
    }
    if (classRank(at.taint) > classRank(grant.maxTaint)) {
      ruledOut = "taint_too_high";
      continue;
    }
    if (best === null || wins({ grant, matchedPath: matched }, best)) {
      best = { grant, matchedPath: matched };
    }
  }
  if (best === null) return { outcome: "denied", reason: ruledOut, grant: null };
  if (best.grant.mode === "deny") {
    return { outcome: "denied", reason: "denied_by_grant", grant: best.grant };
  }
  const outcome = best.grant.mode === "ask" ? "ask" : "allowed";
  return { outcome, grant: best.grant, matchedPath: best.matchedPath };
}

const STRICTNESS: Record<Mode, number> = { deny: 2, ask: 1, auto: 0 };

function wins(
  a: { grant: Grant; matchedPath: string },
  b: { grant: Grant; matchedPath: string },
): boolean {
  const strict = STRICTNESS[a.grant.mode] - STRICTNESS[b.grant.mode];
  if (strict !== 0) return strict > 0;
  if (a.matchedPath.length !== b.matchedPath.length) {
    return a.matchedPath.length > b.matchedPath.length;
  }
  return a.grant.id < b.grant.id;
}

/** Whether two workdirs overlap: one is the other, or holds it. */
export function overlaps(a: string, b: string): boolean {
  return pathInside(a, b) || pathInside(b, a);
}
