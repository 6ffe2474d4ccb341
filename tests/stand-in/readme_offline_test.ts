/**
 * README's "Trying it offline" block, run as it is written, in bash, with `gurt` on PATH: the
 * stand-in model service (`gurt dev model-stand-in`) answers the vault's key check and drives a
 * real `gurt loop` task end to end (a scripted example.echo call, then its final text), on a home
 * of its own under a temporary TMPDIR.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurtArgs } from "../kit/mod.ts";

const README = new URL("../../README.md", import.meta.url);

/** The first sh block under `### Trying it offline`. */
async function offlineBlock(): Promise<string> {
  const text = await Deno.readTextFile(README);
  const at = text.indexOf("\n### Trying it offline\n");
  assert(at !== -1, "README.md has no ### Trying it offline");
  const start = text.indexOf("```sh\n", at) + "```sh\n".length;
  return text.slice(start, text.indexOf("\n```", start));
}

function portFree(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "README's offline block runs verbatim: the stand-in passes the key check and drives a gurt loop task to done",
  sanitizeResources: false,
  fn: async () => {
    const block = await offlineBlock();
    assertStringIncludes(block, "gurt dev model-stand-in --port 8089");
    assert(portFree(8089), "port 8089, which README's block uses, is taken on this machine");
    const home = await Deno.makeTempDir({ prefix: "gurt-offline-tmp-" });
    // As /tmp is: a task's user must pass through it to reach the box home.
    await Deno.chmod(home, 0o711);
    const bin = `${home}/bin`;
    await Deno.mkdir(bin);
    const quoted = gurtArgs([]).map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
    await Deno.writeTextFile(
      `${bin}/gurt`,
      `#!/bin/sh\nexec '${Deno.execPath()}' ${quoted} "$@"\n`,
      {
        mode: 0o755,
      },
    );
    const child = new Deno.Command("bash", {
      args: ["-e", "-c", block],
      env: {
        HOME: home,
        TMPDIR: home,
        PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
        NO_COLOR: "1",
      },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      // Its own process group: whatever the block left running is stopped with it.
      detached: true,
    }).spawn();
    const guard = setTimeout(() => kill(child.pid), 240_000);
    try {
      // Read as it comes: a block that failed half way leaves its background jobs holding the pipes.
      const texts = [child.stdout, child.stderr].map((stream) => new Response(stream).text());
      const out = await child.status;
      kill(child.pid);
      const [stdout, stderr] = await Promise.all(texts);
      assertEquals(out.code, 0, `${stdout}\n${stderr}`);
      assertStringIncludes(stdout, "set ANTHROPIC_API_KEY");
      assertStringIncludes(stdout, "FINAL:");
      assertStringIncludes(stdout, "hi from");
      assertStringIncludes(stdout, "ended: done");
      // The key check and the loop's requests reached the stand-in.
      assertStringIncludes(stderr, "gurt dev model-stand-in: GET /v1/models");
      assertStringIncludes(stderr, "gurt dev model-stand-in: POST /v1/messages");
      // The home's own vault, not the machine's.
      const vault = await Deno.readTextFile(`${home}/gurt-offline/vault.env`);
      assertStringIncludes(vault, "ANTHROPIC_API_KEY=stand-in-key");
    } finally {
      clearTimeout(guard);
      kill(child.pid);
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});

function kill(pid: number): void {
  try {
    Deno.kill(-pid, "SIGTERM");
  } catch {
    // already gone
  }
}
