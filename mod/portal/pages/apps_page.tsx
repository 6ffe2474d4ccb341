/**
 * The Apps page: each installed app with its kind, whether it is on, its server's state, how many
 * tools it offers and its last error; and the step that asks before an app is removed. An app's
 * last error is its server's text: it is shown as data (mod/owner-text), cut short.
 */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type { AppSummaryView } from "../../admin/mod.ts";
import { shownText } from "../../owner-text/mod.ts";
import { DataTable } from "./data_table.tsx";
import { Csrf, Layout, Notice } from "./layout.tsx";

/** The most characters of an app's last error the list shows (its page shows more). */
export const LIST_ERROR_MAX = 200;

/** The list of apps. */
export function AppsPage(
  props: { apps: AppSummaryView[]; csrf: string; notice: string | null },
): Child {
  return (
    <Layout title="Apps" current="/apps" csrf={props.csrf}>
      <Notice text={props.notice} />
      {props.apps.length === 0
        ? (
          <p>
            No app is installed. The owner adds one with <code>gurt app add PATH</code>.
          </p>
        )
        : (
          <DataTable
            columns={["App", "Kind", "Enabled", "State", "Tools", "Last error"]}
            rows={props.apps.map((app) => [
              <a href={`/apps/${encodeURIComponent(app.name)}`}>
                <code>{shownText(app.name, { max: 64 })}</code>
              </a>,
              shownText(app.kind, { max: 32 }),
              app.enabled ? <span class="ok">on</span> : <span class="bad">off</span>,
              shownText(app.state, { max: 64 }),
              String(app.tools),
              app.last_error === null
                ? "none"
                : <code class="data">{shownText(app.last_error, { max: LIST_ERROR_MAX })}</code>,
            ])}
          />
        )}
    </Layout>
  );
}

/** The step before removing an app: what removing does, and the one button that does it. */
export function RemoveAppPage(props: { name: string; tools: number; csrf: string }): Child {
  const name = shownText(props.name, { max: 64 });
  const path = `/apps/${encodeURIComponent(props.name)}`;
  return (
    <Layout title={`Remove the app ${name}?`} current="/apps" csrf={props.csrf}>
      <p>
        {`Removing ${name} stops its server, takes its ${props.tools} tool${
          props.tools === 1 ? "" : "s"
        } away from every task, and deletes its folder and its home. The vault keeps its keys. ` +
          "It cannot be undone: to use the app again, add it again."}
      </p>
      <div class="actions">
        <form method="post" action={`${path}/remove`}>
          <Csrf token={props.csrf} />
          <input type="hidden" name="confirm" value="yes" />
          <button type="submit" class="danger">{`Yes, remove ${name}`}</button>
        </form>
        <a href={path}>{`No, keep ${name}`}</a>
      </div>
    </Layout>
  );
}
