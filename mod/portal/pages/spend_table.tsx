/** A task's spend by model on its page: a small table, rendered on the server (no JavaScript). */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type { SpendRowView } from "../../admin/mod.ts";
import { dollarsText, shownText, spendNotes, totalNanocents } from "../../owner-text/mod.ts";
import { DataTable } from "./data_table.tsx";

/** The table of `rows` (most expensive first), its total, and what its figures rest on. */
export function SpendTable(props: { rows: readonly SpendRowView[] }): Child {
  const rows = props.rows;
  if (rows.length === 0) return <p>No model answers yet.</p>;
  const cells: Child[][] = rows.map((row) => [
    shownText(row.model, { max: 200 }),
    row.provider === null ? "built-in" : shownText(row.provider, { max: 64 }),
    String(row.requests),
    String(row.input),
    String(row.output),
    String(row.cacheWrite),
    String(row.cacheRead),
    dollarsText(row.nanocents),
  ]);
  cells.push(["Total", "", "", "", "", "", "", dollarsText(totalNanocents(rows))]);
  const notes = spendNotes(rows);
  return (
    <>
      <DataTable
        columns={[
          "Model",
          "Provider",
          "Requests",
          "Input",
          "Output",
          "Cache write",
          "Cache read",
          "Cost",
        ]}
        rows={cells}
      />
      {notes.map((note) => <p class="notice">{note}</p>)}
    </>
  );
}
