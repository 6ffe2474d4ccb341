/**
 * gurt serve refuses a vault that anyone but its owner can read, that another user owns, or that is
 * a symbolic link: the message names the file and its mode, and nothing else starts.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { loadConfig } from "../../mod/config/mod.ts";
import { Core } from "../../mod/core/core.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { VaultFileError } from "../../mod/vault/mod.ts";
import { gurt } from "../kit/mod.ts";
import { vaultFolder } from "./helpers.ts";

async function refusedStart(
  prepare: (vault: string) => Promise<void>,
  expected: string[],
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "gurt-vault-home-" });
  const folder = await vaultFolder("ANTHROPIC_API_KEY=sk-ant-never-shown-1234\n");
  try {
    await prepare(folder.path);
    const config = loadConfig({ home, env: { BOX_VAULT: folder.path }, root: false });
    const logs: string[] = [];
    const error = await assertRejects(
      () => Core.start(config, { log: (line) => logs.push(line), asRoot: false }),
      VaultFileError,
    );
    for (const part of expected) assertStringIncludes(error.message, part);
    assertStringIncludes(error.message, folder.path);
    assert(error.message.endsWith("see runbook.md#vault-permissions"), error.message);
    assert(!error.message.includes("sk-ant-never-shown"), "the message shows a value");
    // Nothing started: no admin socket, no audit record or lock, no log line.
    await assertRejects(() => Deno.lstat(adminSocketPath(home)), Deno.errors.NotFound);
    assertEquals([...Deno.readDirSync(`${home}/audit`)].map((e) => e.name), []);
    assertEquals(logs, []);
  } finally {
    await folder.remove();
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("a vault readable by its group refuses to start, naming the file and mode 0640", async () => {
  await refusedStart((vault) => Deno.chmod(vault, 0o640), ["mode 0640", "chmod 600"]);
});

Deno.test("a vault readable by others refuses to start, naming the file and mode 0604", async () => {
  await refusedStart((vault) => Deno.chmod(vault, 0o604), ["mode 0604"]);
});

Deno.test("a vault owned by another user refuses to start (as root: chown to nobody)", {
  ignore: Deno.uid() !== 0,
}, async () => {
  await refusedStart(
    (vault) => Deno.chown(vault, 65534, 65534),
    ["mode 0600", "is owned by uid 65534, not by uid 0"],
  );
});

Deno.test("a vault that is a symbolic link to a 0600 vault elsewhere refuses to start", async () => {
  const elsewhere = await vaultFolder("A_KEY=sk-elsewhere-never-shown\n");
  try {
    await refusedStart(async (vault) => {
      await Deno.remove(vault);
      await Deno.symlink(elsewhere.path, vault);
    }, ["is a symbolic link"]);
  } finally {
    await elsewhere.remove();
  }
});

Deno.test("a missing vault is created empty with mode 0600 and the core starts", async () => {
  const home = await Deno.makeTempDir({ prefix: "gurt-vault-home-" });
  const folder = await vaultFolder("");
  try {
    await Deno.remove(folder.path);
    const path = `${folder.dir}/sub/vault.env`;
    const config = loadConfig({ home, env: { BOX_VAULT: path }, root: false });
    const core = await Core.start(config, { log: () => {}, asRoot: false });
    await core.close();
    const info = await Deno.stat(path);
    assertEquals(info.mode! & 0o777, 0o600);
    assertEquals(info.size, 0);
  } finally {
    await folder.remove();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("gurt serve refuses a group-readable vault with one line and exit status 1", async () => {
  const home = await Deno.makeTempDir({ prefix: "gurt-vault-home-" });
  const folder = await vaultFolder("A_KEY=sk-serve-never-shown\n", 0o640);
  try {
    const run = await gurt(["--home", home, "serve"], { env: { BOX_VAULT: folder.path } });
    assertEquals(run.code, 1);
    assertStringIncludes(run.stderr, `the vault ${folder.path} has mode 0640`);
    assertStringIncludes(run.stderr, "see runbook.md#vault-permissions");
    assert(!run.stderr.includes("sk-serve-never-shown"));
    assert(!run.stderr.includes("admin socket ready"));
  } finally {
    await folder.remove();
    await Deno.remove(home, { recursive: true });
  }
});
