/**
 * `gurt app check FOLDER` reads a folder's app.toml before it is added, and `gurt app add` names a
 * bad manifest by its own name, not the staging folder it was read in.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt } from "../kit/mod.ts";
import { startAppBox } from "./app_kit.ts";

Deno.test({
  name:
    "gurt app check FOLDER: a bad manifest's file and line before it is added; add names app.toml, not its staging folder",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startAppBox();
    const cli = (...args: string[]) =>
      gurt(["--home", box.home, ...args], { env: { BOX_VAULT: `${box.home}/vault.env` } });
    try {
      const bad = await box.source("broken", 'kind = "mcp"\ncommand = ["node"]\ncolour = "red"\n');
      const checked = await cli("app", "check", bad);
      assertEquals(checked.code, 1, checked.stderr);
      assertEquals(
        checked.stdout,
        `${bad}/app.toml:3: colour: unknown key; see runbook.md#app-manifest-invalid\n`,
      );
      const good = await box.source("fine", 'kind = "mcp"\ncommand = ["node"]\n');
      const ok = await cli("app", "check", good);
      assertEquals([ok.code, ok.stdout], [0, `${good}/app.toml: ok\n`], ok.stderr);
      const added = await cli("app", "add", bad);
      assertEquals(added.code, 1);
      assertStringIncludes(added.stderr + added.stdout, "app.toml:3: colour: unknown key");
      assertEquals((added.stderr + added.stdout).includes(".staging-"), false, added.stderr);
    } finally {
      await box.close();
    }
  },
});
