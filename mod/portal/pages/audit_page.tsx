/**
 * The Audit page: the verification's result, the head, a checkpoint line to copy off the box, and
 * one page of records with links to the older and newer pages.
 */
import type { Child } from "hono/jsx";
import type { AuditAnswer, AuditRecordView } from "../../admin/mod.ts";
import { DataTable } from "./data_table.tsx";
import { Layout } from "./layout.tsx";
import { RECORD_COLUMNS, recordCells } from "./owner_words.tsx";

/** One page of records: those shown, the page size, and the seq the next record will have. */
export interface RecordsPage {
  records: AuditRecordView[];
  size: number;
  nextSeq: number;
}

/** The whole page. */
export function AuditPage(props: { audit: AuditAnswer; page: RecordsPage; csrf: string }): Child {
  const audit = props.audit;
  return (
    <Layout title="Audit" current="/audit" csrf={props.csrf}>
      <p class={audit.ok ? "notice" : "error"} role={audit.ok ? "status" : "alert"}>
        {audit.ok
          ? `The audit log verifies: ${audit.records} records, every hash chained.`
          : "The audit log does not verify."}
      </p>
      <pre>{audit.lines.join("\n")}</pre>
      <dl>
        <dt>Head</dt>
        <dd>
          <code>{audit.head ?? "none (the log is empty)"}</code>
        </dd>
      </dl>
      <h2>Checkpoint</h2>
      {audit.checkpoint === null
        ? <p>The log holds no record yet, so there is no checkpoint.</p>
        : (
          <>
            <p>
              Keep this line somewhere off the box. `gurt audit verify --checkpoint FILE` later
              proves the log still holds it.
            </p>
            <label>
              Checkpoint line
              <input
                type="text"
                readonly
                value={audit.checkpoint}
                size={100}
                id="checkpoint"
                aria-describedby="checkpoint-help"
              />
            </label>
            <p id="checkpoint-help">Select the field and copy it.</p>
          </>
        )}
      <Records page={props.page} />
    </Layout>
  );
}

function Records(props: { page: RecordsPage }): Child {
  const { records, size, nextSeq } = props.page;
  if (records.length === 0) {
    return (
      <section aria-labelledby="records-heading">
        <h2 id="records-heading">Records</h2>
        <p>
          No record here.{nextSeq > 0
            ? (
              <>
                {" "}
                <a href="/audit">The newest records</a>
              </>
            )
            : null}
        </p>
      </section>
    );
  }
  const first = records[0].seq;
  const last = records[records.length - 1].seq;
  return (
    <section aria-labelledby="records-heading">
      <h2 id="records-heading">{`Records ${first} to ${last}`}</h2>
      <DataTable
        columns={RECORD_COLUMNS}
        rows={records.map(recordCells)}
      />
      <nav aria-label="Record pages" class="actions">
        {first > 0 ? <a href={`/audit?from=${Math.max(0, first - size)}`}>Older records</a> : null}
        {last + 1 < nextSeq ? <a href={`/audit?from=${last + 1}`}>Newer records</a> : null}
        {last + 1 < nextSeq ? <a href="/audit">The newest records</a> : null}
      </nav>
    </section>
  );
}
