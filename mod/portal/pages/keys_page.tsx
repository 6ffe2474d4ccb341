/**
 * The Accounts & Keys page: the vault's key names and when each was set, a password field that
 * sends a value straight to the vault (never shown again), removing a key, and turning a key off
 * for an app. Without the vault's admin routes it says the vault is not available.
 */
import type { Child } from "hono/jsx";
import type { VaultKeyView } from "../../admin/mod.ts";
import { shownText } from "../../owner-text/mod.ts";
import { Csrf, Layout, Notice } from "./layout.tsx";

/** The whole page; `keys` is null when the vault is not available. */
export function KeysPage(
  props: { keys: VaultKeyView[] | null; csrf: string; notice: string | null; error: string | null },
): Child {
  return (
    <Layout title="Accounts & Keys" current="/keys" csrf={props.csrf}>
      <Notice text={props.notice} />
      <Notice text={props.error} error />
      {props.keys === null
        ? (
          <p class="error" role="alert">
            The vault is not available on this box, so no key can be listed or set here. See
            runbook.md#portal-vault-unavailable.
          </p>
        )
        : <KeyList keys={props.keys} csrf={props.csrf} />}
    </Layout>
  );
}

function KeyList(props: { keys: VaultKeyView[]; csrf: string }): Child {
  return (
    <>
      {props.keys.length === 0
        ? <p>The vault holds no key yet.</p>
        : (
          <ul class="keys" aria-label="Vault keys">
            {props.keys.map((key) => {
              const name = shownText(key.name);
              const path = `/keys/${encodeURIComponent(key.name)}`;
              return (
                <li class="card">
                  <h2>
                    <code>{name}</code>
                  </h2>
                  <p>{`set ${key.set}`}</p>
                  <p>
                    {key.denied_apps.length === 0
                      ? "Every app that declares it may use it."
                      : `Turned off for: ${
                        key.denied_apps.map((text) => shownText(text)).join(", ")
                      }`}
                  </p>
                  <div class="actions">
                    <form method="post" action={`${path}/deny`}>
                      <Csrf token={props.csrf} />
                      <label>
                        App
                        <input type="text" name="app" required size={16} />
                      </label>
                      <button type="submit">Turn off for this app</button>
                    </form>
                    {key.denied_apps.map((app) => (
                      <form method="post" action={`${path}/allow`}>
                        <Csrf token={props.csrf} />
                        <input type="hidden" name="app" value={app} />
                        <button type="submit">{`Turn on again for ${shownText(app)}`}</button>
                      </form>
                    ))}
                    <form method="post" action={`${path}/delete`}>
                      <Csrf token={props.csrf} />
                      <button type="submit" class="danger">{`Remove ${name}`}</button>
                    </form>
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      <section aria-labelledby="set-heading">
        <h2 id="set-heading">Set a key</h2>
        <form method="post" action="/keys" class="card" autocomplete="off">
          <Csrf token={props.csrf} />
          <label>
            Name
            <input type="text" name="name" required pattern="[A-Za-z0-9_.\-]+" size={30} />
          </label>
          <label>
            Value (sent straight to the vault, never shown again)
            <input type="password" name="value" required autocomplete="new-password" size={40} />
          </label>
          <p>
            <button type="submit">Set the key</button>
          </p>
        </form>
      </section>
    </>
  );
}
