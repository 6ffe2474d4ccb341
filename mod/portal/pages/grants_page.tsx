/** The Grants page: every grant file with its mode, tool, constraints, expiry and label. */
import type { Child } from "hono/jsx";
import { escapeArguments } from "../../cli/escape.ts";
import { Layout } from "./layout.tsx";

/** One grant file as shown: parsed fields, or its problems. */
export interface GrantView {
  file: string;
  id: string;
  ok: boolean;
  tool: string | null;
  mode: string | null;
  label: string | null;
  expires: string | null;
  constraints: string[];
  problems: string[];
}

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
            <pre>{props.problems.map(escapeArguments).join("\n")}</pre>
          </div>
        )}
      {props.grants.length === 0 ? <p>There is no grant file.</p> : (
        <div class="table">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Grant</th>
                <th scope="col">Tool</th>
                <th scope="col">Mode</th>
                <th scope="col">Label</th>
                <th scope="col">Constraints</th>
                <th scope="col">Expires</th>
                <th scope="col">Problems</th>
              </tr>
            </thead>
            <tbody>
              {props.grants.map((grant) => (
                <tr>
                  <td data-label="Grant">
                    <code>{escapeArguments(grant.id)}</code>
                  </td>
                  <td data-label="Tool">
                    {grant.tool === null ? "—" : escapeArguments(grant.tool)}
                  </td>
                  <td data-label="Mode">{grant.mode ?? "—"}</td>
                  <td data-label="Label">{grant.label ?? "—"}</td>
                  <td data-label="Constraints">
                    {grant.constraints.length === 0
                      ? "none"
                      : grant.constraints.map((c) => escapeArguments(c)).join("; ")}
                  </td>
                  <td data-label="Expires">{grant.expires ?? "never"}</td>
                  <td data-label="Problems">
                    {grant.ok
                      ? <span class="ok">none</span>
                      : <span class="bad">{grant.problems.map(escapeArguments).join("; ")}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Layout>
  );
}
