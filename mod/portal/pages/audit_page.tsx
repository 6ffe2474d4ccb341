/** The Audit page: the verification's result, the head, and a checkpoint line to copy off the box. */
import type { Child } from "hono/jsx";
import { Layout } from "./layout.tsx";

/** What the page shows of a verification. */
export interface AuditView {
  ok: boolean;
  lines: string[];
  records: number;
  head: string | null;
  checkpoint: string | null;
}

/** The whole page. */
export function AuditPage(props: { audit: AuditView; csrf: string }): Child {
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
    </Layout>
  );
}
