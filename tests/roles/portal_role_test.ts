/**
 * The portal role (`gurt portal-serve`) really is narrowed: it reads the owner token and reaches
 * the admin socket, and anything else of the box home, any program, any other socket or port
 * fails with NotCapable.
 */
import { assertEquals } from "../assert.ts";
import { adminSocketPath, ownerTokenPath } from "../../mod/config/mod.ts";
import { ensureOwnerToken } from "../../mod/portal/mod.ts";
import { ROLE_TABLE, runRole } from "../../mod/roles/mod.ts";
import type { ProbeArgs } from "./probe.ts";
import { withRoleHome } from "./role_home.ts";

const probe = new URL("./probe.ts", import.meta.url);
const NOT_CAPABLE = 13;
const LISTEN = "127.0.0.1:7791";

/** Runs `fn` on a role test home with an owner token, grants, gurt.toml and the portal's socket folder. */
function withPortalHome(fn: (home: string) => Promise<void>): Promise<void> {
  return withRoleHome(async (home) => {
    await ensureOwnerToken(home);
    await fn(home);
  }, {
    prefix: "gurt-portal-role-",
    dirs: ["grants", { path: "run/owner-broker", mode: 0o700 }],
    files: { "grants/echo.toml": 'tool = "example.echo"\n', "gurt.toml": "" },
  });
}

function attempt(home: string, args: ProbeArgs): Promise<number> {
  const permissions = ROLE_TABLE["portal-serve"].permissions({ home, listen: LISTEN });
  return runRole({ role: "portal", permissions, entry: probe, args });
}

Deno.test("the portal role cannot read the vault file, the audit log, the grants or gurt.toml, but reads the owner token", async () => {
  await withPortalHome(async (home) => {
    assertEquals(await attempt(home, { act: "read", target: ownerTokenPath(home) }), 0);
    for (const file of ["vault.env", "audit/2026-11-29.jsonl", "grants/echo.toml", "gurt.toml"]) {
      const target = `${home}/${file}`;
      assertEquals(await attempt(home, { act: "read", target }), NOT_CAPABLE, file);
    }
  });
});

Deno.test("the portal role cannot write the audit log, nor anything else of the box home", async () => {
  await withPortalHome(async (home) => {
    for (const file of ["audit/2026-11-29.jsonl", "audit/2026-11-30.jsonl", "run/portal.addr"]) {
      const target = `${home}/${file}`;
      assertEquals(await attempt(home, { act: "write", target }), NOT_CAPABLE, file);
    }
    assertEquals(await attempt(home, { act: "write", target: ownerTokenPath(home) }), NOT_CAPABLE);
  });
});

Deno.test("the portal role runs no program and reads no environment", async () => {
  await withPortalHome(async (home) => {
    assertEquals(await attempt(home, { act: "run", target: "true" }), NOT_CAPABLE);
    assertEquals(await attempt(home, { act: "env", target: "HOME" }), NOT_CAPABLE);
  });
});

Deno.test("the portal role reaches the admin socket, and no other socket or port", async () => {
  await withPortalHome(async (home) => {
    const admin = Deno.listen({ transport: "unix", path: adminSocketPath(home) });
    try {
      assertEquals(await attempt(home, { act: "net", target: adminSocketPath(home) }), 0);
    } finally {
      admin.close();
    }
    const task = `${home}/tasks/t1/broker.sock`;
    assertEquals(await attempt(home, { act: "net", target: task }), NOT_CAPABLE);
    assertEquals(await attempt(home, { act: "tcp", target: "127.0.0.1:1337" }), NOT_CAPABLE);
    assertEquals(await attempt(home, { act: "tcp", target: "127.0.0.1:7780" }), NOT_CAPABLE);
  });
});
