/** Each role's permissions really narrow it: an act outside them fails with NotCapable. */
import { assertEquals } from "../assert.ts";
import { loadConfig } from "../../mod/config/mod.ts";
import { runRole } from "../../mod/roles/mod.ts";
import type { RoleName, RolePermissions } from "../../mod/roles/mod.ts";
import { cliPermissions } from "../../mod/cli/permissions.ts";
import { corePermissions } from "../../mod/core/mod.ts";
import { workerPermissions } from "../../mod/loop/permissions.ts";
import { relayPermissions } from "../../mod/mcp/permissions.ts";
import { guestPermissions } from "../../mod/exec-guest/permissions.ts";
import type { ProbeArgs } from "./probe.ts";

const probe = new URL("./probe.ts", import.meta.url);
const NOT_CAPABLE = 13;

async function withHome(fn: (home: string) => Promise<void>): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "gurt-roles-" });
  try {
    await Deno.mkdir(`${home}/audit`);
    await Deno.mkdir(`${home}/tasks/t1`, { recursive: true });
    await Deno.writeTextFile(`${home}/vault.env`, "EXAMPLE_KEY=not-a-real-value\n", {
      mode: 0o600,
    });
    await Deno.writeTextFile(`${home}/audit/2026-11-29.jsonl`, "");
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

function config(home: string) {
  return loadConfig({ home, env: { BOX_VAULT: `${home}/vault.env` }, root: false });
}

function attempt(role: RoleName, permissions: RolePermissions, args: ProbeArgs): Promise<number> {
  return runRole({ role, permissions, entry: probe, args });
}

Deno.test("the worker role cannot read the vault file but can read its own code", async () => {
  await withHome(async (home) => {
    const perms = workerPermissions(`${home}/tasks/t1/broker.sock`);
    assertEquals(await attempt("worker", perms, { act: "read", target: `${home}/vault.env` }), 13);
    assertEquals(await attempt("worker", perms, { act: "read", target: probe.pathname }), 0);
  });
});

Deno.test("the worker role cannot read the audit log or the grants, nor run programs", async () => {
  await withHome(async (home) => {
    const perms = workerPermissions(`${home}/tasks/t1/broker.sock`);
    const audit = `${home}/audit/2026-11-29.jsonl`;
    assertEquals(await attempt("worker", perms, { act: "read", target: audit }), NOT_CAPABLE);
    assertEquals(await attempt("worker", perms, { act: "run", target: "true" }), NOT_CAPABLE);
  });
});

Deno.test("the relay role cannot open another task's socket", async () => {
  await withHome(async (home) => {
    const perms = relayPermissions(`${home}/tasks/t1/broker.sock`);
    const other = `${home}/tasks/t2/broker.sock`;
    assertEquals(await attempt("relay", perms, { act: "net", target: other }), NOT_CAPABLE);
  });
});

Deno.test("the owner CLI can read the audit log but cannot write to it", async () => {
  await withHome(async (home) => {
    const perms = cliPermissions(config(home));
    const audit = `${home}/audit/2026-11-29.jsonl`;
    assertEquals(await attempt("cli", perms, { act: "read", target: audit }), 0);
    assertEquals(await attempt("cli", perms, { act: "write", target: audit }), NOT_CAPABLE);
    const fresh = `${home}/audit/new.jsonl`;
    assertEquals(await attempt("cli", perms, { act: "write", target: fresh }), NOT_CAPABLE);
    assertEquals(await attempt("cli", perms, { act: "read", target: `${home}/vault.env` }), 13);
  });
});

Deno.test("the guest role cannot read the box home but can read its workspace", async () => {
  await withHome(async (home) => {
    const workspace = await Deno.makeTempDir({ prefix: "gurt-ws-" });
    try {
      await Deno.writeTextFile(`${workspace}/a.txt`, "a");
      const perms = guestPermissions({ workspace, bind: "127.0.0.1", ports: [0], tokenFiles: [] });
      const inHome = { act: "read", target: `${home}/vault.env` } as const;
      assertEquals(await attempt("guest", perms, inHome), NOT_CAPABLE);
      const audit = { act: "read", target: `${home}/audit/2026-11-29.jsonl` } as const;
      assertEquals(await attempt("guest", perms, audit), NOT_CAPABLE);
      assertEquals(await attempt("guest", perms, { act: "read", target: `${workspace}/a.txt` }), 0);
    } finally {
      await Deno.remove(workspace, { recursive: true });
    }
  });
});

Deno.test("the core role may not write outside the box home and the vault's folder", async () => {
  await withHome(async (home) => {
    const perms = corePermissions(config(home));
    assertEquals(await attempt("core", perms, { act: "write", target: `${home}/x` }), 0);
    const outside = await Deno.makeTempDir({ prefix: "gurt-outside-" });
    try {
      const target = `${outside}/x`;
      assertEquals(await attempt("core", perms, { act: "write", target }), NOT_CAPABLE);
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  });
});
