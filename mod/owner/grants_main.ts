/**
 * The CLI role's side of `gurt grants check` and `gurt grants explain`. It reads the grants as a
 * decision does and runs the same `decide`, and `check` reads the credential rules too, as a
 * credentialed request does; it writes nothing.
 */
import { AdminClient, CoreUnreachableError } from "../admin/mod.ts";
import { keptToolNames } from "../apps/kept_names.ts";
import { credentialsInvalidReport, loadCredentialRules } from "../credentials/mod.ts";
import { standardRegistry } from "../tools/mod.ts";
import {
  type Candidate,
  canonicalArguments,
  dormantGrants,
  explainDecision,
  type GrantProblem,
  grantsInvalidReport,
  loadGrants,
  type Outcome,
} from "../policy/mod.ts";

/** An installed app's kept tool list, which the command line found and the role may read. */
export interface KeptToolList {
  app: string;
  file: string;
}

/** What the command line asks the CLI role to do. */
export type GrantsJob =
  | {
    action: "check";
    home: string;
    socket: string;
    apps: KeptToolList[];
    /** The grant paths not on the box, as the command line found them. */
    missingPaths?: { file: string; line: number | null; path: string }[];
  }
  | {
    action: "explain";
    home: string;
    apps: KeptToolList[];
    tool: string;
    arguments: unknown;
    taint: "private" | "secret";
    untrusted: boolean;
    /** The time to decide at, as an ISO string. */
    at: string;
  };

/** Runs the job; returns the exit status (check: 0 ok, 1 problems; explain: 0, 2, 1). */
export default async function main(job: GrantsJob): Promise<number> {
  if (job.action === "check") {
    const grants = await checkGrants(job);
    const credentials = await credentialsCheck(job.home);
    return grants === 0 && credentials ? 0 : 1;
  }
  return await explain(job);
}

/**
 * The credential rules (credentials/*.toml), checked as the core reads them at each request: their
 * problems, or `credentials: ok` with the rule ids; nothing when there are none. True when valid.
 */
async function credentialsCheck(home: string): Promise<boolean> {
  const load = await loadCredentialRules(`${home}/credentials`);
  if (!load.ok) {
    console.log(credentialsInvalidReport(load.problems));
    return false;
  }
  if (load.rules.size > 0) console.log(`credentials: ok (${[...load.rules.keys()].join(", ")})`);
  return true;
}

async function checkGrants(job: GrantsJob & { action: "check" }): Promise<number> {
  const { problems, dormant } = await coreProblems(job.socket) ?? await offlineProblems(job);
  const missing = (job.missingPaths ?? []).map(({ file, line, path }) =>
    `${line === null ? file : `${file}:${line}`}: note: constraints.paths: ${
      JSON.stringify(path)
    } does not exist on this box; the grant matches nothing there until it does`
  );
  if (problems.length === 0) {
    for (const note of missing) console.log(note);
    for (const grant of dormant) {
      console.log(
        `${grant.file}: note: ${
          JSON.stringify(grant.tool)
        } is a tool of an app that is not installed; the grant matches nothing until an app offers it`,
      );
    }
    console.log("grants: ok");
    return 0;
  }
  console.log(grantsInvalidReport(problems));
  for (const note of missing) console.log(note);
  return 1;
}

async function explain(job: GrantsJob & { action: "explain" }): Promise<number> {
  const load = await loadGrants(`${job.home}/grants`, { appTools: await appTools(job.apps) });
  if (!load.ok) {
    console.log("denied grants_invalid");
    console.log(grantsInvalidReport(load.problems));
    return 1;
  }
  const state = { taint: job.taint, untrusted: job.untrusted };
  const explanation = explainDecision({ tool: job.tool, arguments: job.arguments }, {
    grants: load.grants,
    state,
    now: new Date(job.at),
  });
  const lines = describeOutcome(explanation.outcome);
  if (explanation.argumentsProblem !== null) {
    lines.push(`arguments: ${explanation.argumentsProblem}`);
  }
  const trust = job.untrusted ? "untrusted" : "trusted";
  lines.push(`candidates for ${job.tool} at taint ${job.taint}, ${trust}, at ${job.at}:`);
  if (explanation.argumentsProblem !== null) {
    lines.push("  none considered: the arguments are checked before matching");
  } else if (explanation.candidates.length === 0) {
    lines.push("  none: no grant names this tool");
  }
  const winner = winnerOf(explanation.outcome);
  for (const candidate of explanation.candidates) {
    lines.push(`  ${describeCandidate(candidate, job.taint, winner)}`);
  }
  console.log(lines.join("\n"));
  const kind = explanation.outcome.kind;
  return kind === "allowed" ? 0 : kind === "ask" ? 2 : 1;
}

/**
 * The running core's check, against the tools it offers now (its apps' as they are); null when no
 * core answers on this home.
 */
/** What a check found: the problems, and the grants of apps that are not installed. */
interface CheckFound {
  problems: GrantProblem[];
  dormant: { file: string; tool: string }[];
}

async function coreProblems(socket: string): Promise<CheckFound | null> {
  try {
    const answer = await new AdminClient(socket).grantsCheck();
    return answer.ok ? answer.value : null;
  } catch (error) {
    if (error instanceof CoreUnreachableError) return null;
    throw error;
  }
}

/** The check without the core: the apps' tools as their kept tool lists name them. */
async function offlineProblems(
  job: { home: string; apps: KeptToolList[] },
): Promise<CheckFound> {
  const tools = await appTools(job.apps);
  const load = await loadGrants(`${job.home}/grants`, { appTools: tools });
  return load.ok
    ? { problems: [], dormant: dormantGrants(load.grants.grants, tools) }
    : { problems: load.problems, dormant: [] };
}

/** The tools in gurt's code and those of the installed apps' kept tool lists. */
async function appTools(apps: readonly KeptToolList[]): Promise<ReadonlySet<string>> {
  const names = new Set(standardRegistry().appToolNames());
  for (const app of apps) {
    let listed: unknown = null;
    try {
      listed = JSON.parse(await Deno.readTextFile(app.file));
    } catch {
      // A list that cannot be read names no tool: a grant of one of them is reported.
    }
    for (const name of keptToolNames(app.app, listed)) names.add(name);
  }
  return names;
}

function describeOutcome(outcome: Outcome): string[] {
  if (outcome.kind === "denied") {
    const { reason, grant, grant_sha256 } = outcome.denial;
    return [
      `denied ${reason}`,
      grant === null ? "grant: none" : `grant: ${grant} (sha256 ${grant_sha256})`,
      "label: none",
    ];
  }
  const call = outcome.kind === "allowed" ? outcome.decision : outcome.ask;
  const lines: string[] = [outcome.kind];
  if (outcome.kind === "ask") lines.push(`why: ${outcome.ask.why}`);
  lines.push(`grant: ${call.grant} (sha256 ${call.grantSha256})`);
  const label = call.label;
  lines.push(`label: ${label.resultClass}, ${label.untrusted ? "untrusted" : "trusted"}`);
  if (call.matchedPath !== null) lines.push(`matched path: ${call.matchedPath}`);
  if (call.hosts.length > 0) lines.push(`hosts: ${call.hosts.join(", ")}`);
  lines.push(`arguments: ${canonicalArguments(call)}`);
  return lines;
}

function winnerOf(outcome: Outcome): string | null {
  if (outcome.kind === "allowed") return outcome.decision.grant;
  if (outcome.kind === "ask") return outcome.ask.grant;
  return outcome.denial.grant;
}

function describeCandidate(candidate: Candidate, taint: string, winner: string | null): string {
  const { grant } = candidate;
  const head = `${grant.id} (${grant.mode}):`;
  switch (candidate.verdict) {
    case "left": {
      const through = candidate.matchedPath === null ? "" : ` through ${candidate.matchedPath}`;
      return `${head} ${grant.id === winner ? "wins" : "matches, but does not win"}${through}`;
    }
    case "expired":
      return `${head} ruled out: it expired at ${grant.expires?.toISOString()}`;
    case "taint_too_high":
      return `${head} ruled out: the taint ${taint} is above its max_taint ${grant.maxTaint}`;
    case "not_covered":
      return `${head} ruled out: its constraints do not cover the arguments`;
  }
}
