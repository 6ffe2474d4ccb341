/**
 * Model charges held and never settled (docs/audit.md#held-model-charges). Before a billed model
 * request leaves, its task's journal gets a model.hold line (synced) naming a hold and the most the
 * request may cost. Its charge is a cost record whose `what` is `model hold <id>`, then a journal
 * cost line naming the hold, which settles it. A hold left open is a charge that may not have
 * reached the audit log: the log failed (a full disk), or gurt serve died before the record.
 *
 * At start, after the startup check and before the writer writes (settleHeldCharges), each open
 * hold of a live task, or of a task marked in broker/unsettled/, is looked for in the log (from a
 * day before the hold): a cost record naming it means the log has the charge, and only the journal
 * lacks its line, which is written now. Any other hold is charged once the writer is open
 * (chargeHeldCharges): a cost record `model hold <id> recovered` of the cents a model.owed line
 * gave (the answer's priced usage, when the log failed but the journal did not), else the hold's
 * own (the most the request could cost), then its journal line. A start that dies half way finds
 * the record, or the hold, again at the next.
 */
import { auditDir, fileNameFor, listAuditFiles } from "../audit/mod.ts";
import type { AuditAppender } from "../common/mod.ts";
import { taskDir } from "../config/mod.ts";
import { Journal } from "./journal.ts";
import { type ModelUsageLine, NANOCENTS } from "./model_spend.ts";
import { isLive, readTasks } from "./task_store.ts";

/** The `what` of a model charge's cost record, naming its hold; `recovered` when charged at start. */
export function holdWhat(hold: string, recovered = false): string {
  return `model hold ${hold}${recovered ? " recovered" : ""}`;
}

const WHAT = /^model hold ([0-9a-f]+)( recovered)?$/;

/** A hold to charge once the writer writes. */
export interface HeldCharge {
  task: string;
  hold: string;
  cents: number;
  /** True when the cents are the answer's priced usage (model.owed), not the hold's most. */
  owed: boolean;
  /** The hold's service and model, for the usage line of a charge at its most. */
  service: string;
  model: string | null;
}

/** The folder of tasks whose charge the log could not take while they ran. */
function unsettledDir(home: string): string {
  return `${home}/broker/unsettled`;
}

/**
 * Marks `task` as having a hold whose charge the log could not take, so that the next start looks
 * at its journal even once it has ended.
 */
export async function markUnsettled(home: string, task: string): Promise<void> {
  await Deno.mkdir(unsettledDir(home), { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(`${unsettledDir(home)}/${task}`, "", { mode: 0o600 });
}

/**
 * For each open hold of a live or marked task: writes the journal line of a charge the log already
 * has, and returns the others, to charge with chargeHeldCharges, with a notice for each line.
 */
export async function settleHeldCharges(
  home: string,
  options: { clock?: () => Date } = {},
): Promise<{ held: HeldCharge[]; notices: string[] }> {
  const clock = options.clock ?? (() => new Date());
  const marked = await markedTasks(home);
  const open: (HeldCharge & { time: string })[] = [];
  for (const { id, record } of await readTasks(home)) {
    if (record === null || (!isLive(record.state) && !marked.has(id))) continue;
    const journal = await Journal.open(`${taskDir(home, id)}/journal.jsonl`);
    journal.close();
    if (journal.state.holds.size === 0) await unmark(home, id);
    for (const [hold, held] of journal.state.holds) open.push({ task: id, hold, ...held });
  }
  const held: HeldCharge[] = [];
  const notices: string[] = [];
  if (open.length === 0) return { held, notices };
  const since = open.map((one) => one.time).sort()[0];
  const recorded = await holdRecords(home, since);
  for (const { time: _, ...charge } of open) {
    const found = recorded.get(`${charge.task} ${charge.hold}`);
    if (found === undefined) {
      held.push(charge);
      continue;
    }
    const line = { cents: found.cents, what: found.what, hold: charge.hold };
    const listed = await listCharge(home, { task: charge.task, line, clock });
    if (listed !== null) {
      notices.push(listed);
      continue;
    }
    notices.push(
      `gurt: task ${charge.task}: the audit log holds the charge of model request hold ` +
        `${charge.hold} (${found.cents}¢), which its journal lacked; the journal now lists it; ` +
        "see runbook.md#model-charge-recovered",
    );
  }
  return { held, notices };
}

/**
 * Charges each held charge: its cost record (flagged recovered), then its journal line. A charge
 * whose record could not be written stays held for the next start. A notice for each.
 */
export async function chargeHeldCharges(
  home: string,
  options: { held: HeldCharge[]; audit: AuditAppender; clock?: () => Date },
): Promise<string[]> {
  const clock = options.clock ?? (() => new Date());
  const notices: string[] = [];
  for (const { task, hold, cents, owed, service, model } of options.held) {
    const what = holdWhat(hold, true);
    try {
      await options.audit.append({ type: "cost", task, cents, what });
    } catch (error) {
      notices.push(
        `gurt: task ${task}: the charge of model request hold ${hold} could not be recovered ` +
          `(${(error as Error).message}); the next start tries again; ` +
          "see runbook.md#model-charge-recovered",
      );
      continue;
    }
    // Not written: the record is in the log, where the next start finds it. A charge at its most
    // had no answer read, so no usage line: one goes first, for the spend by model (its tokens
    // unknown), or the table by model would leave it out.
    const usage = owed ? undefined : boundUsage({ service, model, cents, hold }, clock);
    const listed = await listCharge(home, { task, line: { cents, what, hold }, clock, usage });
    if (listed !== null) notices.push(listed);
    const which = owed ? "its answer's usage" : "the most the request could cost";
    notices.push(
      `gurt: task ${task}: the charge of model request hold ${hold} never reached the audit log; ` +
        `recorded now as ${cents}¢ (${which}), flagged recovered; ` +
        "see runbook.md#model-charge-recovered",
    );
  }
  return notices;
}

/** Writes a charge's journal line: null, or a notice that it could not be written. */
async function listCharge(
  home: string,
  charge: {
    task: string;
    line: { cents: number; what: string; hold: string };
    clock: () => Date;
    usage?: ModelUsageLine;
  },
): Promise<string | null> {
  const { task, line, clock, usage } = charge;
  try {
    const journal = await Journal.open(`${taskDir(home, task)}/journal.jsonl`);
    try {
      if (usage !== undefined) await journal.append(usage);
      await journal.append({ type: "cost", time: clock().toISOString(), ...line });
      if (journal.state.holds.size === 0) await unmark(home, task);
    } finally {
      journal.close();
    }
    return null;
  } catch (error) {
    return `gurt: task ${task}: the journal line of model request hold ${line.hold}'s charge ` +
      `could not be written (${(error as Error).message}); the next start writes it; ` +
      "see runbook.md#model-charge-recovered";
  }
}

/** The usage line of a hold charged at its most: no tokens known, its cents exactly. */
function boundUsage(
  held: { service: string; model: string | null; cents: number; hold: string },
  clock: () => Date,
): ModelUsageLine {
  return {
    type: "model.usage",
    time: clock().toISOString(),
    service: held.service,
    model: held.model ?? "(no model named)",
    tokens: { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 },
    nanocents: held.cents * NANOCENTS,
    rates: "bound",
    cut: "bound",
    hold: held.hold,
  };
}

/** The tasks marked in broker/unsettled/. */
async function markedTasks(home: string): Promise<Set<string>> {
  const found = new Set<string>();
  try {
    for await (const entry of Deno.readDir(unsettledDir(home))) found.add(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return found;
}

async function unmark(home: string, task: string): Promise<void> {
  await Deno.remove(`${unsettledDir(home)}/${task}`).catch(() => {});
}

/**
 * Every model charge's cost record in the audit files from the day before `since` on, by
 * `<task> <hold>`: its cents and what. A line is parsed only if it names a hold.
 */
async function holdRecords(
  home: string,
  since: string,
): Promise<Map<string, { cents: number; what: string }>> {
  const dir = auditDir(home);
  const day = Date.parse(since);
  const from = fileNameFor(new Date((Number.isNaN(day) ? 0 : day) - 86_400_000).toISOString());
  const found = new Map<string, { cents: number; what: string }>();
  for (const name of await listAuditFiles(dir)) {
    if (name < from) continue;
    for await (const line of fileLines(`${dir}/${name}`)) {
      if (!line.includes('"what":"model hold ')) continue;
      let event: { type?: unknown; task?: unknown; cents?: unknown; what?: unknown };
      try {
        event = JSON.parse(line).event ?? {};
      } catch {
        continue; // a torn last line: no record
      }
      const match = typeof event.what === "string" ? WHAT.exec(event.what) : null;
      if (event.type !== "cost" || typeof event.task !== "string" || match === null) continue;
      found.set(`${event.task} ${match[1]}`, {
        cents: Number(event.cents),
        what: event.what as string,
      });
    }
  }
  return found;
}

/** The lines of a file as it is read, a piece at a time: never held whole. */
async function* fileLines(path: string): AsyncGenerator<string> {
  const file = await Deno.open(path, { read: true });
  let carry = "";
  for await (const piece of file.readable.pipeThrough(new TextDecoderStream())) {
    const lines = (carry + piece).split("\n");
    carry = lines.pop()!;
    yield* lines;
  }
  if (carry !== "") yield carry;
}
