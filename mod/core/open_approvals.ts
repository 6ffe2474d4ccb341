/**
 * The pending approvals kept across a restart (docs/grants.md#approvals). The table lives in the
 * core's memory; the core keeps it on disk too, in `run/approvals-open.json` (0600 in the core's
 * own `run/`), as it changes: each open approval as the owner was shown it, with the call or /ask
 * that opens it again (mod/broker/approval_restore.ts). A stop and a crash leave it alike; the
 * next start reads it, opens each again, and says how many it opened and closed. `gurt audit
 * verify` reads it too, to say which approvals with no answer are still waiting.
 */
import { z } from "zod";
import type { KeptApproval, RestoreCounts } from "../broker/mod.ts";
import { writeFileAtomic } from "../common/mod.ts";

/** The file's path in `home`. */
export function openApprovalsPath(home: string): string {
  return `${home}/run/approvals-open.json`;
}

const shown = z.object({
  approval: z.number().int().nonnegative(),
  task: z.string().min(1),
  key: z.string().min(1),
  kind: z.enum(["grant", "budget", "ask"]),
  tool: z.string().min(1),
  arguments: z.string(),
  grant: z.string().nullable(),
  taint: z.string(),
  costCents: z.number().int().nonnegative().nullable(),
  created: z.string(),
  expires: z.string(),
});

const kept = z.union([
  z.object({
    kind: z.literal("call"),
    call: z.object({
      tool: z.string().min(1),
      key: z.string().min(1),
      input: z.unknown(),
      raw: z.string(),
      inputSha256: z.string(),
    }),
  }),
  z.object({
    kind: z.literal("ask"),
    ask: z.object({
      question: z.string().min(1),
      key: z.string().min(1),
      costCents: z.number().int().min(0).optional(),
      payee: z.string().max(200).optional(),
      purpose: z.string().max(2000).optional(),
    }),
  }),
]);

/** The file: its version, and every open approval. */
const keptFile = z.object({
  version: z.literal(2),
  approvals: z.array(z.object({ shown, kept: kept.nullable() })),
});

/** What the last core left open: the approvals by task, or the notice of a file that was not. */
export interface KeptAtStart {
  byTask: Map<string, KeptApproval[]>;
  /** For a file that could not be read, or one of an older core that kept only numbers. */
  notice: string | null;
}

/**
 * What the last core left open, by task (its approvals, oldest first). A file that cannot be read,
 * or an older core's list of numbers only, is said in a notice: those approvals stay closed.
 */
export async function keptAtStart(home: string): Promise<KeptAtStart> {
  const path = openApprovalsPath(home);
  const byTask = new Map<string, KeptApproval[]>();
  let data: unknown;
  try {
    data = JSON.parse(await Deno.readTextFile(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { byTask, notice: null };
    return { byTask, notice: unreadable(path, (error as Error).message) };
  }
  if (Array.isArray(data)) {
    // An older core's: numbers and tasks only, nothing to open them again with.
    if (data.length === 0) return { byTask, notice: null };
    return {
      byTask,
      notice: `gurt serve: the restart closed ${plural(data.length)} left open by an older ` +
        `gurt serve, which kept nothing to open them again with; their tasks ask again; ` +
        "see runbook.md#approvals-at-restart",
    };
  }
  const parsed = keptFile.safeParse(data);
  if (!parsed.success) return { byTask, notice: unreadable(path, "not a list of approvals") };
  for (const one of parsed.data.approvals) {
    const list = byTask.get(one.shown.task) ?? [];
    list.push(one as KeptApproval);
    byTask.set(one.shown.task, list);
  }
  for (const list of byTask.values()) list.sort((a, b) => a.shown.approval - b.shown.approval);
  return { byTask, notice: null };
}

function unreadable(path: string, why: string): string {
  return `gurt serve: ${path} could not be read (${why}); approvals open before the restart, ` +
    "if any, were closed; see runbook.md#approvals-at-restart";
}

function plural(count: number): string {
  return `${count} approval${count === 1 ? "" : "s"}`;
}

/**
 * The start's line about the approvals kept from before it (null when there were none): how many
 * are open again, per task (with the number of its oldest kept one), and how many were closed,
 * expired or not opened again.
 */
export function restoredNotice(
  counts: RestoreCounts,
  byTask: Map<string, { count: number; first: number }>,
): string | null {
  const closed = counts.expired + counts.closed;
  if (counts.restored === 0 && closed === 0) return null;
  // The tasks in the order of their oldest approval, as `gurt approvals` lists them.
  const tasks = [...byTask].filter(([, one]) => one.count > 0)
    .sort(([, a], [, b]) => a.first - b.first)
    .map(([task, one]) => `${task}: ${one.count}`).join(", ");
  const open = counts.restored === 0
    ? "no approval open before the restart is open again"
    : `${plural(counts.restored)} open before the restart ${
      counts.restored === 1 ? "is" : "are"
    } open again with ${counts.restored === 1 ? "its number" : "their numbers"} (${tasks}); ` +
      "gurt approvals lists them";
  const shut = closed === 0
    ? ""
    : `; ${plural(closed)} closed (${counts.expired} expired while gurt serve was stopped, ` +
      `${counts.closed} could not be opened again: their tasks ask again)`;
  return `gurt serve: ${open}${shut}; see runbook.md#approvals-at-restart`;
}

/**
 * Keeps `run/approvals-open.json` the table of open approvals: each change writes it (writes that
 * come while one is under way are folded into the next). `stop` writes the last table and keeps it
 * for the next start, before the core withdraws them at its close.
 */
export class OpenApprovals {
  #list: KeptApproval[] = [];
  #dirty = false;
  #writing: Promise<void> | null = null;
  #stopped = false;

  constructor(
    readonly home: string,
    readonly log: (line: string) => void,
  ) {}

  /** Notes the approvals open now. */
  note(open: KeptApproval[]): void {
    if (this.#stopped) return;
    this.#list = open;
    this.#dirty = true;
    this.#writing ??= this.#write();
  }

  /** Resolves once what was noted is on disk. */
  async flushed(): Promise<void> {
    while (this.#writing !== null) await this.#writing;
  }

  /** Writes what is pending and stops noting changes. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.flushed();
  }

  async #write(): Promise<void> {
    const path = openApprovalsPath(this.home);
    while (this.#dirty) {
      this.#dirty = false;
      const list = this.#list;
      try {
        if (list.length === 0) await Deno.remove(path).catch(() => {});
        else await writeFileAtomic(path, JSON.stringify({ version: 2, approvals: list }));
      } catch (error) {
        this.log(`gurt serve: the list of open approvals could not be written: ${error}`);
      }
    }
    this.#writing = null;
  }
}
