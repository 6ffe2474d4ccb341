/**
 * A real core (startBox) with the portal in front of it on 127.0.0.1:0, and a way to sign in: the
 * code `gurt portal` would print, spent through the portal's own sign-in form. The portal reaches
 * the core's admin handlers over a Unix socket of the test's own, as it reaches the admin socket:
 * the test chooses the vault routes behind it (none, or the stub).
 */
import { Hono } from "hono";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { adminRoutes } from "../../mod/core/admin_routes.ts";
import { serveSocket } from "../../mod/core/home_layout.ts";
import type { GuardedServer } from "../../mod/net/mod.ts";
import { ensureOwnerToken, loginCode, type Portal, startPortal } from "../../mod/portal/mod.ts";
import { type BoxOptions, startBox, type TestBox } from "../kit/mod.ts";

/** A box and its portal. */
export interface PortalBox {
  box: TestBox;
  portal: Portal;
  origin: string;
  /** A fresh one-time sign-in link, as `gurt portal` prints it. */
  link(): Promise<string>;
  /** Signs in over plain HTTP; returns the cookie header value and the session's CSRF token. */
  signIn(): Promise<{ cookie: string; csrf: string }>;
  close(): Promise<void>;
}

/** What the test-only vault stub keeps: name → value, and the apps each key is off for. */
export interface StubVault {
  file: string;
}

/**
 * A test-only stand-in for the vault's four admin routes (`GET /api/vault`, `PUT` and `DELETE
 * /api/vault/:name`, `POST /api/vault/:name/deny|allow`), keeping the keys in `<home>/vault.env`,
 * mounted in front of the real admin handlers the same way the vault's routes will be.
 */
export function stubVaultRoutes(home: string): Hono {
  const file = `${home}/vault.env`;
  const app = new Hono();
  const read = async (): Promise<Map<string, { value: string; set: string; off: string[] }>> => {
    const map = new Map<string, { value: string; set: string; off: string[] }>();
    try {
      for (const line of (await Deno.readTextFile(file)).split("\n")) {
        if (line === "") continue;
        const entry = JSON.parse(line);
        map.set(entry.name, entry);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return map;
  };
  const write = (map: Map<string, { value: string; set: string; off: string[] }>) =>
    Deno.writeTextFile(
      file,
      [...map.entries()].map(([name, e]) => JSON.stringify({ name, ...e }) + "\n").join(""),
      { mode: 0o600 },
    );
  app.get("/api/vault", async (c) => {
    const keys = [...(await read()).entries()].map(([name, e]) => ({
      name,
      set: e.set,
      denied_apps: e.off,
    }));
    return c.json({ keys });
  });
  app.put("/api/vault/:name", async (c) => {
    const { value } = await c.req.json();
    if (typeof value !== "string" || value.startsWith("sk-ant-")) {
      return c.json({ error: "an Anthropic API key cannot be kept in the vault" }, 400);
    }
    const map = await read();
    map.set(c.req.param("name"), { value, set: new Date().toISOString(), off: [] });
    await write(map);
    return c.json({ ok: true, name: c.req.param("name") });
  });
  app.delete("/api/vault/:name", async (c) => {
    const map = await read();
    if (!map.delete(c.req.param("name"))) return c.json({ error: "no such key" }, 404);
    await write(map);
    return c.json({ ok: true, name: c.req.param("name") });
  });
  for (const act of ["deny", "allow"] as const) {
    app.post(`/api/vault/:name/${act}`, async (c) => {
      const { app: name } = await c.req.json();
      const map = await read();
      const entry = map.get(c.req.param("name"));
      if (entry === undefined) return c.json({ error: "no such key" }, 404);
      entry.off = act === "deny"
        ? [...new Set([...entry.off, name])]
        : entry.off.filter((a) => a !== name);
      await write(map);
      return c.json({ ok: true, name: c.req.param("name") });
    });
  }
  return app;
}

/** Starts a box and a portal on a free loopback port; `vault` mounts the stub vault routes. */
export async function startPortalBox(
  options: BoxOptions & { vault?: boolean } = {},
): Promise<PortalBox> {
  const box = await startBox(options);
  const real = adminRoutes(box.core.deps, {
    tasks: box.core.tasks,
    socket: adminSocketPath(box.home),
    auditIndex: box.core.auditIndex,
  });
  let admin = real;
  if (options.vault === true) {
    admin = new Hono();
    admin.route("/", stubVaultRoutes(box.home));
    admin.route("/", real);
  }
  const socket = `${box.home}/run/owner-broker/portal-test.sock`;
  let served: GuardedServer | null = null;
  let portal: Portal;
  try {
    served = await serveSocket(socket, (request) => admin.fetch(request));
    portal = await startPortal({
      listen: "127.0.0.1:0",
      socket,
      token: await ensureOwnerToken(box.home),
      log: (line) => box.logs.push(line),
    });
  } catch (error) {
    await served?.shutdown();
    await box.close();
    throw error;
  }
  return {
    box,
    portal,
    ...signInTo(portal.origin, box.home),
    async close() {
      await portal.close();
      await served?.shutdown();
      await box.close();
    },
  };
}

/**
 * The portal at `origin` of the box at `home`: its one-time sign-in link, as `gurt portal` prints
 * it, and a sign-in over plain HTTP through its own form (the cookie and the session's CSRF token).
 */
export function signInTo(
  origin: string,
  home: string,
): Pick<PortalBox, "origin" | "link" | "signIn"> {
  const link = async () => {
    const token = (await Deno.readTextFile(`${home}/portal/owner.token`)).trim();
    return `${origin}/login?code=${loginCode(token, new Date())}`;
  };
  return {
    origin,
    link,
    async signIn() {
      const code = new URL(await link()).searchParams.get("code")!;
      const response = await fetch(`${origin}/login`, {
        method: "POST",
        headers: { origin, "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ code }),
        redirect: "manual",
      });
      await response.body?.cancel();
      const cookie = /gurt_session=[^;]+/.exec(response.headers.get("set-cookie") ?? "")?.[0];
      if (response.status !== 303 || cookie === undefined) {
        throw new Error(`sign-in failed with ${response.status}`);
      }
      const page = await fetch(`${origin}/approvals`, { headers: { cookie } });
      const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
      if (csrf === undefined) throw new Error("the page has no CSRF field");
      return { cookie, csrf };
    },
  };
}
