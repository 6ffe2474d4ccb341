/** The Accounts & Keys page and its forms, over the vault's admin routes. */
import { type Context, Hono } from "hono";
import type { AdminClient, AdminResult, VaultKeyView } from "../../admin/mod.ts";
import type { PortalEnv } from "../context.ts";
import { KeysPage } from "../pages/keys_page.tsx";
import { csrf, formText, type RouteDeps } from "./route_helpers.ts";

const KEY_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** `/keys`, `/keys/:name/delete`, `/keys/:name/deny` and `/keys/:name/allow`. */
export function keyRoutes(options: RouteDeps): Hono<PortalEnv> {
  const { admin } = options;
  const app = new Hono<PortalEnv>();
  app.get("/keys", async (c) => {
    const notice = keysNotice(c.req.query("done"), c.req.query("key"));
    return c.html(
      <KeysPage keys={await vaultKeys(admin)} csrf={csrf(c)} notice={notice} error={null} />,
    );
  });
  app.post("/keys", async (c) => {
    const form = await c.req.parseBody();
    const name = formText(form, "name");
    const value = formText(form, "value", { trim: false });
    if (!KEY_NAME.test(name)) {
      return keysError(c, admin, "A key name is letters, digits, `_`, `.` and `-`.", 400);
    }
    const answer = await admin.setKey(name, value);
    if (unanswered(answer)) return keysError(c, admin, vaultMissing(), 503);
    if (!answer.ok) {
      return keysError(c, admin, `The key ${name} was not set: ${answer.error}`, 400);
    }
    return c.redirect(`/keys?done=set&key=${encodeURIComponent(name)}`, 303);
  });
  for (const act of ["delete", "deny", "allow"] as const) {
    app.post(`/keys/:name/${act}`, async (c) => {
      const name = c.req.param("name");
      const form = await c.req.parseBody();
      const answer = act === "delete"
        ? await admin.removeKey(name)
        : await admin.setKeyUse(name, { app: formText(form, "app"), denied: act === "deny" });
      if (unanswered(answer) && (await vaultKeys(admin)) === null) {
        return keysError(c, admin, vaultMissing(), 503);
      }
      if (!answer.ok) {
        return keysError(c, admin, `The key ${name} was not changed: ${answer.error}`, 400);
      }
      return c.redirect(`/keys?done=${act}&key=${encodeURIComponent(name)}`, 303);
    });
  }

  return app;
}

async function vaultKeys(admin: AdminClient): Promise<VaultKeyView[] | null> {
  const answer = await admin.vaultKeys();
  return answer.ok ? answer.value.keys : null;
}

/**
 * Whether the core has no such request at all (a core without vault routes): the admin socket
 * answers a request of no kind with 403 forbidden; an older core answered 404.
 */
function unanswered(answer: AdminResult<unknown>): boolean {
  return !answer.ok &&
    (answer.status === 404 || (answer.status === 403 && answer.code === "forbidden"));
}

function vaultMissing(): string {
  return "The vault is not available on this box, so the key was not set; " +
    "see runbook.md#portal-vault-unavailable";
}

async function keysError(
  c: Context<PortalEnv>,
  admin: AdminClient,
  error: string,
  status: 400 | 503,
): Promise<Response> {
  const keys = await vaultKeys(admin);
  return c.html(<KeysPage keys={keys} csrf={csrf(c)} notice={null} error={error} />, status);
}

function keysNotice(done: string | undefined, key: string | undefined): string | null {
  if (key === undefined || !KEY_NAME.test(key)) return null;
  if (done === "set") return `The key ${key} was set.`;
  if (done === "delete") return `The key ${key} was removed.`;
  if (done === "deny") return `The key ${key} was turned off for that app.`;
  if (done === "allow") return `The key ${key} was turned on again for that app.`;
  return null;
}
