/**
 * Each role's permissions, as ROLE_TABLE gives them, really narrow it: an act outside them fails
 * with NotCapable. The probe runs in each row's role with that row's permissions.
 */
import { assertEquals } from "../assert.ts";
import { loadConfig } from "../../mod/config/mod.ts";
import { ROLE_TABLE, runRole } from "../../mod/roles/mod.ts";
import type { RolePermissions, RoleStart } from "../../mod/roles/mod.ts";
import type { ProbeArgs } from "./probe.ts";
import { withRoleHome } from "./role_home.ts";
import { withHome } from "../kit/mod.ts";

const probe = new URL("./probe.ts", import.meta.url);
const NOT_CAPABLE = 13;

function config(home: string) {
  return loadConfig({ home, env: { BOX_VAULT: `${home}/vault.env` }, root: false });
}

/** Runs the probe as `row`'s role with `permissions`, which the test computed from that row. */
function attempt<P>(
  row: RoleStart<P>,
  permissions: RolePermissions,
  args: ProbeArgs,
): Promise<number> {
  return runRole({ role: row.role, permissions, entry: probe, args });
}

Deno.test("the worker role cannot read the vault file but can read its own code", async () => {
  await withRoleHome(async (home) => {
    const row = ROLE_TABLE.loop;
    const perms = row.permissions({ socket: `${home}/tasks/t1/broker.sock` });
    assertEquals(await attempt(row, perms, { act: "read", target: `${home}/vault.env` }), 13);
    assertEquals(await attempt(row, perms, { act: "read", target: probe.pathname }), 0);
  });
});

Deno.test("the worker role cannot read the audit log or the grants, nor run programs", async () => {
  await withRoleHome(async (home) => {
    const row = ROLE_TABLE.loop;
    const perms = row.permissions({ socket: `${home}/tasks/t1/broker.sock` });
    const audit = `${home}/audit/2026-11-29.jsonl`;
    assertEquals(await attempt(row, perms, { act: "read", target: audit }), NOT_CAPABLE);
    assertEquals(await attempt(row, perms, { act: "run", target: "true" }), NOT_CAPABLE);
  });
});

Deno.test("the relay role cannot open another task's socket", async () => {
  await withRoleHome(async (home) => {
    const row = ROLE_TABLE.mcp;
    const perms = row.permissions({ socket: `${home}/tasks/t1/broker.sock` });
    const other = `${home}/tasks/t2/broker.sock`;
    assertEquals(await attempt(row, perms, { act: "net", target: other }), NOT_CAPABLE);
  });
});

Deno.test("the owner CLI can read the audit log but cannot write to it", async () => {
  await withRoleHome(async (home) => {
    const row = ROLE_TABLE.approvals;
    const perms = row.permissions({ config: config(home) });
    const audit = `${home}/audit/2026-11-29.jsonl`;
    assertEquals(await attempt(row, perms, { act: "read", target: audit }), 0);
    assertEquals(await attempt(row, perms, { act: "write", target: audit }), NOT_CAPABLE);
    const fresh = `${home}/audit/new.jsonl`;
    assertEquals(await attempt(row, perms, { act: "write", target: fresh }), NOT_CAPABLE);
    assertEquals(await attempt(row, perms, { act: "read", target: `${home}/vault.env` }), 13);
  });
});

Deno.test("the guest role cannot read the box home but can read its workspace", async () => {
  await withRoleHome(async (home) => {
    await withHome(async (workspace) => {
      await Deno.writeTextFile(`${workspace}/a.txt`, "a");
      const row = ROLE_TABLE.guest;
      const perms = row.permissions({
        workspace,
        bind: "127.0.0.1",
        ports: [0],
        tokenFiles: [],
        desktop: null,
      });
      const inHome = { act: "read", target: `${home}/vault.env` } as const;
      assertEquals(await attempt(row, perms, inHome), NOT_CAPABLE);
      const audit = { act: "read", target: `${home}/audit/2026-11-29.jsonl` } as const;
      assertEquals(await attempt(row, perms, audit), NOT_CAPABLE);
      assertEquals(await attempt(row, perms, { act: "read", target: `${workspace}/a.txt` }), 0);
    }, { prefix: "gurt-ws-" });
  });
});

Deno.test("the core role may not write outside the box home and the vault's folder", async () => {
  await withRoleHome(async (home) => {
    const row = ROLE_TABLE.serve;
    const perms = row.permissions({ config: config(home) });
    assertEquals(await attempt(row, perms, { act: "write", target: `${home}/x` }), 0);
    await withHome(async (outside) => {
      const target = `${outside}/x`;
      assertEquals(await attempt(row, perms, { act: "write", target }), NOT_CAPABLE);
    }, { prefix: "gurt-outside-" });
  });
});

Deno.test("the test worker reads the script it is given and no other file beside it", async () => {
  await withRoleHome(async (home) => {
    const row = ROLE_TABLE["test-worker"];
    await Deno.writeTextFile(`${home}/script.txt`, "GET /task\n");
    await Deno.writeTextFile(`${home}/other.txt`, "x");
    const socket = `${home}/tasks/t1/broker.sock`;
    const perms = row.permissions({ socket, files: [`${home}/script.txt`] });
    assertEquals(await attempt(row, perms, { act: "read", target: `${home}/script.txt` }), 0);
    const other = { act: "read", target: `${home}/other.txt` } as const;
    assertEquals(await attempt(row, perms, other), NOT_CAPABLE);
  });
});

Deno.test("gurt audit verify --checkpoint reads that one file outside the box home, and writes nothing", async () => {
  await withRoleHome(async (home) => {
    await withHome(async (outside) => {
      await Deno.writeTextFile(`${outside}/checkpoint`, "1 2026-11-29.jsonl 00\n");
      await Deno.writeTextFile(`${outside}/other`, "x");
      const row = ROLE_TABLE.audit;
      const perms = row.permissions({ config: config(home), files: [`${outside}/checkpoint`] });
      const read = (target: string) => attempt(row, perms, { act: "read", target });
      assertEquals(await read(`${outside}/checkpoint`), 0);
      assertEquals(await read(`${outside}/other`), NOT_CAPABLE);
      const write = { act: "write", target: `${outside}/checkpoint` } as const;
      assertEquals(await attempt(row, perms, write), NOT_CAPABLE);
      // Without --checkpoint the file is out of reach.
      const plain = row.permissions({ config: config(home) });
      const unasked = { act: "read", target: `${outside}/checkpoint` } as const;
      assertEquals(await attempt(row, plain, unasked), NOT_CAPABLE);
    }, { prefix: "gurt-checkpoint-" });
  });
});
