/** `gurt portal` runs with only the owner token and the address file: no vault, no writes. */
import { assertEquals } from "../assert.ts";
import { loadConfig } from "../../mod/config/mod.ts";
import { ensureOwnerToken } from "../../mod/portal/mod.ts";
import { ROLE_TABLE, runRole } from "../../mod/roles/mod.ts";
import type { ProbeArgs } from "../roles/probe.ts";
import { withHome } from "../kit/mod.ts";

const probe = new URL("../roles/probe.ts", import.meta.url);
const NOT_CAPABLE = 13;

Deno.test("gurt portal's role reads the owner token but not the vault, the audit log, nor writes", async () => {
  await withHome(async (home) => {
    await ensureOwnerToken(home);
    await Deno.mkdir(`${home}/audit`);
    await Deno.writeTextFile(`${home}/audit/2026-11-29.jsonl`, "");
    await Deno.writeTextFile(`${home}/vault.env`, "EXAMPLE_KEY=not-a-real-value\n");
    const config = loadConfig({ home, env: { BOX_VAULT: `${home}/vault.env` }, root: false });
    const row = ROLE_TABLE.portal;
    const perms = row.permissions({ config });
    const attempt = (args: ProbeArgs) =>
      runRole({ role: row.role, permissions: perms, entry: probe, args });
    assertEquals(await attempt({ act: "read", target: `${home}/portal/owner.token` }), 0);
    assertEquals(await attempt({ act: "read", target: `${home}/vault.env` }), NOT_CAPABLE);
    assertEquals(
      await attempt({ act: "read", target: `${home}/audit/2026-11-29.jsonl` }),
      NOT_CAPABLE,
    );
    assertEquals(await attempt({ act: "write", target: `${home}/run.txt` }), NOT_CAPABLE);
  }, { prefix: "gurt-portal-perms-" });
});
