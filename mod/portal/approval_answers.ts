/**
 * Who answered a task's approvals, for its page: each Approval record, found in the audit log after
 * its Decision record (whose seq is the approval's number), and kept once found, as a record never
 * changes. The core's index of a task's records holds only those that name it as `task`; an
 * Approval record names it as `session`, so the portal looks for it here.
 */
import type { AdminClient, AuditRecordView } from "../admin/mod.ts";

/** How many records one look reads after a Decision, a page at a time. */
const PAGE = 200;
const MAX_PAGES = 5;
/** How many answers the portal keeps; past it the oldest are looked up again when asked. */
const KEPT = 10_000;

/** The Approval records of answered approvals, by approval number. */
export class ApprovalAnswers {
  readonly #admin: AdminClient;
  readonly #found = new Map<number, AuditRecordView>();
  /** Where the look for an approval not found yet goes on: the log is not read again before it. */
  readonly #from = new Map<number, number>();

  constructor(admin: AdminClient) {
    this.#admin = admin;
  }

  /** The Approval records of the approvals `ids` that have one, of task `task`, oldest first. */
  async of(task: string, ids: readonly number[]): Promise<AuditRecordView[]> {
    const out: AuditRecordView[] = [];
    for (const id of ids) {
      const record = this.#found.get(id) ?? await this.#look(task, id);
      if (record !== null) out.push(record);
    }
    return out;
  }

  async #look(task: string, id: number): Promise<AuditRecordView | null> {
    let from = this.#from.get(id) ?? id + 1;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await this.#admin.auditRecords({ from, limit: PAGE });
      if (!answer.ok) return null;
      const records = answer.value.records;
      const found = records.find((record) =>
        record.event.type === "approval" && record.event.decision === id &&
        record.event.session === task
      );
      if (found !== undefined) {
        if (this.#found.size >= KEPT) this.#found.delete(this.#found.keys().next().value!);
        this.#found.set(id, found);
        this.#from.delete(id);
        return found;
      }
      if (records.length > 0) from = records[records.length - 1].seq + 1;
      if (records.length < PAGE) break;
    }
    if (this.#from.size >= KEPT) this.#from.delete(this.#from.keys().next().value!);
    this.#from.set(id, from);
    return null;
  }
}
