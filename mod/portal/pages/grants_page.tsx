/** The Grants page: every grant file with its mode, tool, constraints, expiry and label. */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type { GrantView } from "../../admin/mod.ts";
import { shownText } from "../../owner-text/mod.ts";
import { DataTable } from "./data_table.tsx";
import { Layout } from "./layout.tsx";
import { Help } from "./owner_words.tsx";

/** The whole page: the set's validity, its problems as `gurt grants check` prints them, each file. */
export function GrantsPage(
  props: { grants: GrantView[]; problems: string[]; csrf: string },
): Child {
  return (
    <Layout title="Grants" current="/grants" csrf={props.csrf}>
      {props.problems.length === 0
        ? <p class="notice" role="status">The grant files are valid.</p>
        : (
          <div class="error" role="alert">
            <p>
              The grant files are invalid, so every call is denied with grants_invalid. See
              runbook.md#grants-invalid.
            </p>
            <pre>{props.problems.map((text) => shownText(text)).join("\n")}</pre>
          </div>
        )}
      {props.grants.length === 0 ? <p>There is no grant file.</p> : (
        <DataTable
          columns={["Grant", "Tool", "Mode", "Label", "Constraints", "Expires", "Problems"]}
          rows={props.grants.map((grant) => [
            <code>{shownText(grant.id)}</code>,
            grant.tool === null ? "—" : shownText(grant.tool),
            grant.mode ?? "—",
            grant.label === null ? "—" : <Help topic="grant">{shownText(grant.label)}</Help>,
            grant.constraints.length === 0
              ? "none"
              : grant.constraints.map((c) => shownText(c)).join("; "),
            grant.expires ?? "never",
            grant.ok
              ? <span class="ok">none</span>
              : <span class="bad">{grant.problems.map((text) => shownText(text)).join("; ")}</span>,
          ])}
        />
      )}
    </Layout>
  );
}
