/**
 * The vault's owner routes, under /api/vault on the admin socket and the owner API. No route ever
 * returns a value, and no error repeats one.
 *
 *   GET    /api/vault              → {keys: [{name, set, denied_apps}]}
 *   PUT    /api/vault/:name        {value} → {ok: true, name}      (audit vault_set)
 *   DELETE /api/vault/:name        → {ok: true}                    (audit vault_removed)
 *   POST   /api/vault/:name/deny   {app} → {ok: true, name, app, denied: true}   (audit vault_denied)
 *   POST   /api/vault/:name/allow  {app} → {ok: true, name, app, denied: false}  (audit vault_allowed)
 */
import { Hono } from "hono";
import { z } from "zod";
import type { AuditEvent } from "../audit/mod.ts";
import { type AuditAppender, HttpError, readBodyBytes } from "../common/mod.ts";
import type { Config } from "../config/mod.ts";
import type { ToolRegistry } from "../tools/mod.ts";
import { ANTHROPIC_KEY_NAME, checkAnthropicKey } from "./anthropic_check.ts";
import { checkAppName, checkKeyName, VaultNameError } from "./names.ts";
import type { Vault } from "./vault.ts";
import { VaultFileError } from "./vault_file.ts";

const setBody = z.strictObject({ value: z.string() });
const appBody = z.strictObject({ app: z.string() });

/** The largest PUT body: a value of 64 KB in JSON, with room for escapes. */
const MAX_BODY = 512 * 1024;

/** What the vault's routes use of the core. */
export interface VaultRouteDeps {
  config: Pick<Config, "vaultSettings">;
  audit: AuditAppender;
  /** The box's tools, whose apps are the ones a key can be denied to. */
  registry: Pick<ToolRegistry, "appToolNames">;
  /** Tells the owner, on the core's output, that an audit record could not be written. */
  auditFailed(error: unknown): void;
}

/** The /api/vault routes over what they use of the core, and its vault. */
export function vaultRoutes(deps: VaultRouteDeps, vault: Vault): Hono {
  const app = new Hono();

  app.get("/", (c) => c.json({ keys: vault.list() }));

  app.put("/:name", async (c) => {
    const name = validName(c.req.param("name"));
    const body = parseBody(await readBodyBytes(c.req.raw, MAX_BODY), setBody, '{"value": "…"}');
    if (name === ANTHROPIC_KEY_NAME) {
      const check = await checkAnthropicKey(body.value, {
        baseUrl: deps.config.vaultSettings.anthropic_base_url,
        timeoutMs: deps.config.vaultSettings.anthropic_check_timeout_ms,
      });
      if (check.kind === "refused") throw new HttpError(400, check.message, "key_refused");
      if (check.kind === "unchecked") throw new HttpError(502, check.message, "key_unchecked");
    }
    await guarded(() => vault.set(name, body.value, record(deps, { type: "vault_set", name })));
    return c.json({ ok: true, name });
  });

  app.delete("/:name", async (c) => {
    const name = validName(c.req.param("name"));
    const removed = await guarded(() =>
      vault.remove(name, record(deps, { type: "vault_removed", name }))
    );
    if (!removed) throw new HttpError(404, `the vault key ${name} is not set`, "no_such_key");
    return c.json({ ok: true });
  });

  for (const action of ["deny", "allow"] as const) {
    app.post(`/:name/${action}`, async (c) => {
      const name = validName(c.req.param("name"));
      const body = parseBody(await readBodyBytes(c.req.raw, 4096), appBody, '{"app": "…"}');
      const appName = knownApp(deps, body.app);
      const denied = action === "deny";
      const event: AuditEvent = denied
        ? { type: "vault_denied", app: appName, name }
        : { type: "vault_allowed", app: appName, name };
      await guarded(() => vault.setDenied(appName, name, { denied, record: record(deps, event) }));
      return c.json({ ok: true, name, app: appName, denied });
    });
  }
  return app;
}

function record(deps: VaultRouteDeps, event: AuditEvent): () => Promise<void> {
  return async () => {
    try {
      await deps.audit.append(event);
    } catch (error) {
      deps.auditFailed(error);
      throw new HttpError(
        503,
        `the change could not be written to the audit log, so the vault was not changed; ` +
          `see runbook.md#audit-unavailable`,
        "audit_unavailable",
      );
    }
  };
}

/** Runs a vault change, turning its failures into the documented answers. */
async function guarded<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    if (error instanceof VaultNameError) throw new HttpError(400, error.message);
    if (error instanceof VaultFileError) throw new HttpError(500, error.message, "vault_unusable");
    throw error;
  }
}

function validName(name: string): string {
  try {
    return checkKeyName(name);
  } catch (error) {
    throw new HttpError(400, (error as Error).message);
  }
}

function knownApp(deps: VaultRouteDeps, app: string): string {
  try {
    checkAppName(app);
  } catch (error) {
    throw new HttpError(400, (error as Error).message);
  }
  const apps = new Set([...deps.registry.appToolNames()].map((tool) => tool.split(".")[0]));
  if (!apps.has(app)) {
    throw new HttpError(
      400,
      `there is no app ${app} on this box; its apps are ${[...apps].sort().join(", ") || "none"}`,
    );
  }
  return app;
}

/** Parses a small JSON body. Unlike the broker's parser it never quotes the body back. */
function parseBody<T>(bytes: Uint8Array, schema: z.ZodType<T>, shape: string): T {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new HttpError(400, `the body is not JSON text in UTF-8; send ${shape}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length === 0 ? "the body" : issue.path.join(".");
    const what = issue.code === "unrecognized_keys" ? "has an unknown field" : issue.message;
    throw new HttpError(400, `${where}: ${what}; send ${shape}`);
  }
  return parsed.data;
}
