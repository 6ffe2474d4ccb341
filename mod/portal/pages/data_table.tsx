/** A table of records that stacks into labelled lines on a phone (each cell names its column). */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";

/** One table: column names, and each row's cells in the same order. */
export function DataTable(props: { columns: string[]; rows: Child[][] }): Child {
  return (
    <div class="table">
      <table class="stack">
        <thead>
          <tr>
            {props.columns.map((column) => <th scope="col">{column}</th>)}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr>
              {row.map((cell, i) => <td data-label={props.columns[i]}>{cell}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
