/**
 * What a user of `gurt guest` is told: --help names every BOX_* setting the guest reads, with its
 * default (or that it is required), README.md's guest section names them too, and the README's
 * guest example runs as written, curl included.
 */
import { assert, assertEquals } from "../assert.ts";
import { gurtArgs } from "../kit/mod.ts";
import { freePort } from "../cua/fixture.ts";

const root = new URL("../..", import.meta.url).pathname;

/** Every BOX_* name in the code that reads the guest's settings. */
async function settingsRead(): Promise<string[]> {
  const names = new Set<string>();
  for (const file of ["mod/exec-guest/settings.ts", "mod/cua/options.ts"]) {
    const text = await Deno.readTextFile(`${root}${file}`);
    for (const match of text.matchAll(/\bBOX_[A-Z_]+\b/g)) names.add(match[0]);
  }
  return [...names].sort();
}

/** README.md from "## The guest" to the next "## " heading. */
async function guestSection(): Promise<string> {
  const readme = await Deno.readTextFile(`${root}README.md`);
  const start = readme.indexOf("\n## The guest\n");
  assert(start >= 0, "README.md has a section ## The guest");
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

Deno.test("gurt guest --help names every BOX_* setting the guest reads, each with its default", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["guest", "--help"]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(output.code, 0);
  const help = new TextDecoder().decode(output.stdout);
  const names = await settingsRead();
  assert(names.length >= 18, `the settings read: ${names.join(" ")}`);
  for (const name of names) {
    const line = help.split("\n").find((row) => row.trimStart().startsWith(`${name} `));
    assert(line !== undefined, `--help does not name ${name}:\n${help}`);
    assert(
      /default|required|instead of/.test(line),
      `--help names ${name} without its default: ${line}`,
    );
  }
  const token = help.split("\n").find((row) => row.trimStart().startsWith("BOX_TOKEN "));
  assert(token?.includes("required"), "BOX_TOKEN is said to be required");
  for (const name of ["BOX_TOKEN_FILE", "BOX_HOST_TOKEN_FILE", "BOX_VNC_PASSWORD_FILE"]) {
    const file = help.split("\n").find((row) => row.trimStart().startsWith(`${name} `));
    assert(file?.includes("/dev/fd/N"), `--help says ${name} may be a descriptor: ${file}`);
  }
});

Deno.test("README.md's guest section names every BOX_* setting the guest reads", async () => {
  const section = await guestSection();
  for (const name of await settingsRead()) {
    assert(section.includes(`\`${name}\``), `README.md's guest section does not name ${name}`);
  }
});

Deno.test("README.md's guest example runs as written: the guest starts and curl gets ok", async () => {
  const section = await guestSection();
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert(block !== null, "the guest section has a sh example");
  // The example as written, with three substitutions a test needs: its own workspace instead of
  // /workspace, free ports instead of 1337 and 1340, and this checkout's gurt on the PATH.
  const work = await Deno.makeTempDir({ prefix: "gurt-readme-" });
  const [exec, host] = [freePort(), freePort()];
  const script = block[1]
    .replaceAll("/workspace", `${work}/workspace`)
    .replaceAll("1337", String(exec))
    .replaceAll("1340", String(host));
  assert(script.includes("curl"), "the example calls the guest with curl");
  try {
    await Deno.mkdir(`${work}/bin`);
    const launcher = [Deno.execPath(), ...gurtArgs([])].map((arg) => `'${arg}'`).join(" ");
    await Deno.writeTextFile(`${work}/bin/gurt`, `#!/bin/sh\nexec ${launcher} "$@"\n`, {
      mode: 0o755,
    });
    const flags = script.includes("--exec-port") ? "" : ` --exec-port ${exec} --host-port ${host}`;
    const ran = await new Deno.Command("bash", {
      args: [
        "-euc",
        script.replace(/gurt guest --workspace (\S+)/, `gurt guest --workspace $1${flags}`),
      ],
      env: { PATH: `${work}/bin:${Deno.env.get("PATH")}`, HOME: work },
      cwd: work,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(ran.stdout);
    const stderr = new TextDecoder().decode(ran.stderr);
    assertEquals(ran.code, 0, `the example failed:\n${stdout}\n${stderr}`);
    assert(stdout.includes('"stdout":"ok\\n"'), `curl did not get ok:\n${stdout}\n${stderr}`);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
