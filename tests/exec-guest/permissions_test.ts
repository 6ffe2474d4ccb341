/** The guest role's permissions are real: it may read its workspace, never the box home. */
import { assertEquals } from "../assert.ts";
import { ROLE_TABLE, runRole } from "../../mod/roles/mod.ts";

Deno.test("the guest role gets NotCapable reading a box home path, and can read its workspace", async () => {
  const home = await Deno.makeTempDir({ prefix: "gurt-home-" });
  const workspace = await Deno.makeTempDir({ prefix: "gurt-guest-ws-" });
  try {
    await Deno.writeTextFile(`${home}/gurt.toml`, "");
    await Deno.writeTextFile(`${workspace}/file.txt`, "x");
    const permissions = ROLE_TABLE.guest.permissions({
      workspace,
      bind: "127.0.0.1",
      ports: [0, 0],
      tokenFiles: [],
      desktop: null,
    });
    const entry = new URL("./read_probe_entry.ts", import.meta.url);
    const home_ = await runRole({
      role: "guest",
      permissions,
      entry,
      args: { path: `${home}/gurt.toml` },
    });
    assertEquals(home_, 0, "reading the box home must fail with NotCapable");
    const own = await runRole({
      role: "guest",
      permissions,
      entry,
      args: { path: `${workspace}/file.txt` },
    });
    assertEquals(own, 3, "the workspace is readable");
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});
