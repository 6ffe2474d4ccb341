/**
 * One app's page: what `gurt app show` says (its manifest's facts, its keys set, missing or off,
 * its tools with their cost, read-only hint and input schema, the tools left out and why), a switch
 * per key that turns it off or on for this app (the vault's deny list), and the buttons that turn
 * the app off, on, or remove it. Everything the app's server supplied (tool names, descriptions,
 * schemas, errors) and its manifest's text is someone else's: it is shown as data
 * (mod/owner-text: hidden characters escaped, one line, cut short), never as markup.
 */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type { AppDetailView } from "../../admin/mod.ts";
import { centsText, shownLines, shownText } from "../../owner-text/mod.ts";
import { DataTable } from "./data_table.tsx";
import { Csrf, Layout, Notice } from "./layout.tsx";

/** The most characters of a tool's description, a left-out tool's reason or an error shown. */
export const TEXT_MAX = 1000;

/** The most characters of a tool's input schema shown (as indented JSON). */
export const SCHEMA_MAX = 4000;

type Secret = AppDetailView["secrets"][number];
type Tool = AppDetailView["tool_list"][number];

/** What the page is built from; `denied` is the keys the vault has off for this app (null: no vault). */
export interface AppPageProps {
  app: AppDetailView;
  denied: ReadonlySet<string> | null;
  csrf: string;
  notice: string | null;
  error: string | null;
}

/** The whole page. */
export function AppPage(props: AppPageProps): Child {
  const { app } = props;
  const name = shownText(app.name, { max: 64 });
  const path = `/apps/${encodeURIComponent(app.name)}`;
  return (
    <Layout title={`App ${name}`} current="/apps" csrf={props.csrf}>
      <Notice text={props.notice} />
      <Notice text={props.error} error />
      <p>
        <a href="/apps">All apps</a>
      </p>
      <Facts app={app} />
      <div class="actions">
        <form
          method="post"
          action={`${path}/${app.disabled_by === "owner" ? "enable" : "disable"}`}
        >
          <Csrf token={props.csrf} />
          <button type="submit">
            {app.disabled_by === "owner" ? `Turn ${name} on` : `Turn ${name} off`}
          </button>
        </form>
        <a class="button danger" href={`${path}/remove`}>{`Remove ${name}…`}</a>
      </div>
      <Secrets app={app} denied={props.denied} csrf={props.csrf} />
      <Tools tools={app.tool_list} />
      <LeftOut app={app} />
    </Layout>
  );
}

function Facts(props: { app: AppDetailView }): Child {
  const { app } = props;
  const enabled = app.disabled_by === "manifest"
    ? "off: enabled = false in its app.toml"
    : app.disabled_by === "owner"
    ? "off: turned off by the owner"
    : "on";
  return (
    <dl class="facts">
      <dt>Description</dt>
      <dd class="description">
        {app.description === null ? "none" : shownText(app.description, { max: TEXT_MAX })}
      </dd>
      <dt>Kind</dt>
      <dd>{shownText(app.kind, { max: 32 })}</dd>
      <dt>Enabled</dt>
      <dd class="enabled">{enabled}</dd>
      <dt>State</dt>
      <dd class="state">
        {shownText(app.state, { max: 64 }) +
          (app.paused_until === null ? "" : ` (paused until ${shownText(app.paused_until)})`)}
      </dd>
      <dt>Starts</dt>
      <dd>{shownText(app.start, { max: 32 })}</dd>
      <dt>Hosts</dt>
      <dd class="hosts">
        {app.hosts.length === 0
          ? "none: the app has no network"
          : app.hosts.map((host) => shownText(host, { max: 300 })).join(", ")}
      </dd>
      <dt>Last error</dt>
      <dd class="last-error">
        {app.last_error === null
          ? "none"
          : <code class="data">{shownText(app.last_error, { max: TEXT_MAX })}</code>}
      </dd>
      <dt>Folder</dt>
      <dd>
        <code>{shownText(app.folder, { max: 300 })}</code>
      </dd>
      <dt>Manifest SHA-256</dt>
      <dd>
        <code>{shownText(app.manifest_sha256, { max: 80 })}</code>
      </dd>
    </dl>
  );
}

/** A key's state for this app: set, missing or off, and why it cannot be used where it cannot. */
export function secretState(secret: Secret, denied: ReadonlySet<string> | null): string {
  if (secret.usable === "turned off in app.toml") return "off (in its app.toml)";
  if (!secret.set) return "missing (set it on Accounts & Keys)";
  if (denied?.has(secret.name) === true) return "off (turned off for this app)";
  if (secret.usable === null) return "set";
  return `set, but not usable: ${shownText(secret.usable, { max: TEXT_MAX })}`;
}

function Secrets(
  props: { app: AppDetailView; denied: ReadonlySet<string> | null; csrf: string },
): Child {
  const { app, denied } = props;
  const path = `/apps/${encodeURIComponent(app.name)}/keys`;
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">Keys</h2>
      {app.secrets.length === 0 ? <p>The app reads no vault key.</p> : (
        <DataTable
          columns={["Key", "Reaches the app as", "State", "For this app"]}
          rows={app.secrets.map((secret) => {
            const key = shownText(secret.name, { max: 128 });
            const off = denied?.has(secret.name) === true;
            return [
              <code>{key}</code>,
              shownText(secret.reaches, { max: 200 }),
              <span class={`key-state ${secret.usable === null ? "ok" : "bad"}`}>
                {secretState(secret, denied)}
              </span>,
              denied === null
                ? "the vault is not available; see runbook.md#portal-vault-unavailable"
                : !secret.set
                ? <a href="/keys">set it first</a>
                : (
                  <form
                    method="post"
                    action={`${path}/${encodeURIComponent(secret.name)}/${off ? "on" : "off"}`}
                  >
                    <Csrf token={props.csrf} />
                    <button type="submit" role="switch" aria-checked={off ? "false" : "true"}>
                      {`${key}: ${off ? "off, turn on" : "on, turn off"}`}
                    </button>
                  </form>
                ),
            ];
          })}
        />
      )}
    </section>
  );
}

function Tools(props: { tools: Tool[] }): Child {
  return (
    <section aria-labelledby="tools-heading">
      <h2 id="tools-heading">{`Tools (${props.tools.length})`}</h2>
      {props.tools.length === 0
        ? <p>The app offers no tool yet.</p>
        : (
          <ul class="keys" aria-label="Tools">
            {props.tools.map((tool) => (
              <li class="card tool">
                <h3>
                  <code>{shownText(tool.name, { max: 128 })}</code>
                </h3>
                <p class="tool-description data">
                  {shownText(tool.description, { max: TEXT_MAX })}
                </p>
                <dl>
                  <dt>Its server's name</dt>
                  <dd>
                    <code>{shownText(tool.server_name, { max: 128 })}</code>
                  </dd>
                  <dt>Cost</dt>
                  <dd>{tool.cost_cents === 0 ? "free" : `${centsText(tool.cost_cents)} a call`}</dd>
                  <dt>Read-only</dt>
                  <dd>{tool.read_only ? "yes (its server says so)" : "no"}</dd>
                </dl>
                <details>
                  <summary>Input schema</summary>
                  <pre class="data">{shownLines(schemaText(tool.input), { max: SCHEMA_MAX }).join("\n")}</pre>
                </details>
              </li>
            ))}
          </ul>
        )}
    </section>
  );
}

function schemaText(input: unknown): string {
  try {
    return JSON.stringify(input, null, 2) ?? "none";
  } catch {
    return "(not JSON)";
  }
}

function LeftOut(props: { app: AppDetailView }): Child {
  const left = props.app.left_out;
  if (left.length === 0) return null;
  return (
    <section aria-labelledby="left-out-heading">
      <h2 id="left-out-heading">{`Tools left out (${left.length})`}</h2>
      <ul class="left-out">
        {left.map((tool) => (
          <li>
            <code>{shownText(tool.server_name, { max: 128 })}</code>
            {`: ${shownText(tool.problem, { max: TEXT_MAX })}`}
          </li>
        ))}
      </ul>
    </section>
  );
}
