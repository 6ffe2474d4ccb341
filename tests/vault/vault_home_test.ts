/**
 * A box home of its own has a vault of its own (runbook.md#vault-permissions): as root, a `--home`
 * other than /var/lib/gurt uses `<home>/vault.env`, so `gurt vault set` on a test home never
 * writes the machine's /etc/box/vault.env; `gurt serve` and `gurt config` say which vault it is.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, makeHome, startServe } from "../kit/mod.ts";

const MACHINE_VAULT = "/etc/box/vault.env";

/** The machine vault's bytes, or null when it does not exist. */
async function machineVault(): Promise<string | null> {
  try {
    return await Deno.readTextFile(MACHINE_VAULT);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

Deno.test({
  name:
    "as root, gurt serve --home DIR says and uses DIR/vault.env, and vault set never writes /etc/box/vault.env",
  ignore: Deno.uid() !== 0,
  sanitizeResources: false,
  fn: async () => {
    const home = await makeHome({ prefix: "gurt-vault-own-" });
    const before = await machineVault();
    // No BOX_VAULT, whatever the environment that runs the tests holds.
    const serve = await startServe(home, { clearEnv: true, env: { HOME: "/root" } });
    try {
      assertEquals(serve.exited, null, serve.stderr());
      // Said before anything is written: the old rule wrote the machine's vault here.
      assertStringIncludes(
        serve.stderr(),
        `gurt serve: vault ${home}/vault.env (this box home's own; BOX_VAULT or [vault] path names another)`,
      );
      const env = { BOX_VAULT: "" };
      const set = await gurt(["--home", home, "vault", "set", "OWN_HOME_TOKEN"], {
        env,
        stdin: "own-home-value-1234\n",
      });
      assertEquals(set.code, 0, set.stderr);
      const list = await gurt(["--home", home, "vault", "list"], { env });
      assertStringIncludes(list.stdout, "OWN_HOME_TOKEN");
      assertStringIncludes(
        await Deno.readTextFile(`${home}/vault.env`),
        "OWN_HOME_TOKEN=own-home-value-1234",
      );
      assertEquals((await Deno.stat(`${home}/vault.env`)).mode! & 0o777, 0o600);
      assertEquals(await machineVault(), before);
      assert(!(before ?? "").includes("OWN_HOME_TOKEN"));
      const config = await gurt(["--home", home, "config"], { env });
      assertStringIncludes(config.stdout, `# vault: ${home}/vault.env (this box home's own`);
    } finally {
      await serve.stop();
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "[vault] path in gurt.toml is the vault gurt serve uses and says",
  sanitizeResources: false,
  fn: async () => {
    const keys = await Deno.makeTempDir({ prefix: "gurt-vault-keys-" });
    const home = await makeHome({
      prefix: "gurt-vault-path-",
      files: { "gurt.toml": `[vault]\npath = "${keys}/box.env"\n` },
    });
    const serve = await startServe(home, { clearEnv: true, env: { HOME: "/root" } });
    try {
      assertEquals(serve.exited, null, serve.stderr());
      assertStringIncludes(
        serve.stderr(),
        `gurt serve: vault ${keys}/box.env (from gurt.toml's [vault] path)`,
      );
      const set = await gurt(["--home", home, "vault", "set", "PATH_CHOSEN_TOKEN"], {
        env: { BOX_VAULT: "" },
        stdin: "path-chosen-value-1234\n",
      });
      assertEquals(set.code, 0, set.stderr);
      assertStringIncludes(await Deno.readTextFile(`${keys}/box.env`), "PATH_CHOSEN_TOKEN=");
      assertEquals((await Deno.stat(`${keys}/box.env`)).mode! & 0o777, 0o600);
    } finally {
      await serve.stop();
      await Deno.remove(home, { recursive: true });
      await Deno.remove(keys, { recursive: true });
    }
  },
});
