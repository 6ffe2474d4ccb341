/**
 * An exec cannot take the guest's tokens (mod/guest/self_guard.ts): the guest runs as an ordinary
 * user, as its execs do, and an exec tries every way in: the guest's /proc/PID/environ, cmdline,
 * mem and fd/N, its threads' environ, its own inherited descriptors, and the token files. Nothing
 * it reads is a token, and no word it read opens the host service.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { call, startDaemon } from "../exec-guest/helpers.ts";
import { guestArgs, gurtArgs, readToNewline } from "../kit/mod.ts";

const NOBODY = 65534;
const asRoot = Deno.uid() === 0;

/** A guest started as nobody by a root shell that first runs `opens` (say `exec 3<file`). */
interface NobodyGuest {
  exec: string;
  host: string;
  token: string;
  stop(): Promise<string>;
}

async function startAsNobody(
  env: Record<string, string>,
  opens: string,
  token: string,
): Promise<NobodyGuest> {
  const scratch = await Deno.makeTempDir({ prefix: "gurt-guard-test-" });
  await Deno.chmod(scratch, 0o755);
  const workspace = `${scratch}/workspace`;
  const denoDir = `${scratch}/deno`;
  for (const dir of [workspace, denoDir]) {
    await Deno.mkdir(dir);
    await Deno.chown(dir, NOBODY, NOBODY);
  }
  const words = [
    "setpriv",
    `--reuid=${NOBODY}`,
    `--regid=${NOBODY}`,
    "--clear-groups",
    "env",
    "-i",
    "PATH=/usr/bin:/bin",
    `DENO_DIR=${denoDir}`,
    `HOME=${denoDir}`,
    ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
    Deno.execPath(),
    ...gurtArgs(["guest", ...guestArgs(workspace)]),
  ];
  const quoted = words.map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
  const child = new Deno.Command("sh", {
    args: ["-c", `${opens}\nexec ${quoted}`],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const text = await readToNewline(reader);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await child.status;
    await reader.cancel();
    await Deno.remove(scratch, { recursive: true });
    return await stderr;
  };
  if (!text.includes("\n")) throw new Error(`the guest did not start: ${await stop()}`);
  const line = JSON.parse(text.slice(0, text.indexOf("\n")));
  return { exec: line.exec, host: line.host, token, stop };
}

/** Every way in an exec has, as one shell script; $PPID is the guest (the exec's parent). */
function probeScript(files: string[]): string {
  return [
    "G=$PPID",
    'for f in environ cmdline; do echo "== $f"; tr "\\000" "\\n" < /proc/$G/$f; done',
    'for t in /proc/$G/task/*; do tr "\\000" "\\n" < "$t/environ"; done',
    'echo "== mem"; (exec 5< /proc/$G/mem && echo MEM-OPENED)',
    'echo "== fd"; ls -l /proc/$G/fd; for f in /proc/$G/fd/*; do timeout 1 head -c 4096 "$f"; done',
    'echo "== inherited"; for n in 3 4 5 6 7 8 9; do (head -c 4096 <&$n); ' +
    "head -c 4096 /proc/self/fd/$n; done",
    'echo "== env"; env',
    // ptrace(PTRACE_ATTACH) without gdb, where python3 is there to make the call; the tracer's
    // exit detaches it again.
    "command -v python3 > /dev/null && python3 -c 'import ctypes, sys; " +
    "libc = ctypes.CDLL(None, use_errno=True); " +
    'print("PTRACE-ATTACH", libc.ptrace(16, int(sys.argv[1]), 0, 0), ctypes.get_errno())\' $G',
    ...files.map((file) => `echo "== ${file}"; cat '${file}'`),
    "true",
  ].join("\n");
}

function existsFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Runs the probe as an exec; what it printed, both streams. */
async function probe(guest: NobodyGuest, files: string[] = []): Promise<string> {
  const ran = await call(guest, `${guest.exec}/v1/exec`, {
    method: "POST",
    json: { command: probeScript(files) },
  });
  assertEquals(ran.status, 200, ran.text);
  return `${ran.body.stdout}\n${ran.body.stderr}`;
}

/** No word the exec read opens the host service. */
async function noWordOpensHost(guest: NobodyGuest, output: string): Promise<void> {
  const words = [...new Set(output.split(/[\s\0=:'"]+/).filter((word) => word.length >= 8))];
  for (const word of words.slice(0, 400)) {
    const ready = await fetch(`${guest.host}/v1/ready`, {
      headers: { authorization: `Bearer ${word}` },
    });
    await ready.body?.cancel();
    assertEquals(ready.status, 401, `a word an exec read opens the host service: ${word}`);
  }
}

Deno.test({
  name: "an exec of a guest given its tokens in the environment reads none of them anywhere",
  ignore: !asRoot,
  fn: async () => {
    const secrets = {
      BOX_TOKEN: "exec-token-in-env-0123456789",
      BOX_HOST_TOKEN: "host-token-in-env-0123456789",
      BOX_VNC_PASSWORD: "vnc-password-in-env-0123",
    };
    const guest = await startAsNobody(secrets, "", secrets.BOX_TOKEN);
    try {
      const output = await probe(guest);
      for (const [name, value] of Object.entries(secrets)) {
        assert(!output.includes(value), `an exec read ${name}:\n${output}`);
      }
      assertStringIncludes(output, "Permission denied", "the kernel refused /proc of the guest");
      assert(!output.includes("MEM-OPENED"), "the guest's memory could be opened");
      assert(!output.includes("PTRACE-ATTACH 0 "), `an exec attached to the guest:\n${output}`);
      const python = existsFile("/usr/bin/python3");
      if (python) assertStringIncludes(output, "PTRACE-ATTACH -1 1", "ptrace was refused (EPERM)");
      await noWordOpensHost(guest, output);
      const ready = await call({ token: secrets.BOX_HOST_TOKEN }, `${guest.host}/v1/ready`);
      assertEquals(ready.status, 200, "the host token itself still works");
    } finally {
      await guest.stop();
    }
  },
});

Deno.test({
  name:
    "tokens given on descriptors of root-only files: the files and descriptors stay shut to execs",
  ignore: !asRoot,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gurt-guard-tokens-" });
    await Deno.chmod(dir, 0o755);
    const execFile = `${dir}/exec.token`;
    const hostFile = `${dir}/host.token`;
    await Deno.writeTextFile(execFile, "exec-token-on-fd-0123456789\n", { mode: 0o600 });
    await Deno.writeTextFile(hostFile, "host-token-on-fd-0123456789\n", { mode: 0o600 });
    const guest = await startAsNobody(
      { BOX_TOKEN_FILE: "/dev/fd/3", BOX_HOST_TOKEN_FILE: "/proc/self/fd/4" },
      `exec 3<'${execFile}' 4<'${hostFile}'`,
      "exec-token-on-fd-0123456789",
    );
    let stderr = "";
    try {
      const output = await probe(guest, [execFile, hostFile]);
      assert(!output.includes("exec-token-on-fd"), `an exec read the exec token:\n${output}`);
      assert(!output.includes("host-token-on-fd"), `an exec read the host token:\n${output}`);
      await noWordOpensHost(guest, output);
      const ready = await call({ token: "host-token-on-fd-0123456789" }, `${guest.host}/v1/ready`);
      assertEquals(ready.status, 200, "the host token read from its descriptor works");
    } finally {
      stderr = await guest.stop();
      await Deno.remove(dir, { recursive: true });
    }
    assert(!stderr.includes("guest-token-readable"), stderr);
  },
});

Deno.test("a token file every exec could read too is named in a warning at start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-guard-tokens-" });
  const file = `${dir}/token`;
  await Deno.writeTextFile(file, "token-in-a-readable-file-0123\n", { mode: 0o600 });
  const guest = await startDaemon({ BOX_TOKEN: "", BOX_TOKEN_FILE: file });
  const { stderr } = await guest.shutdown();
  await Deno.remove(dir, { recursive: true });
  assertStringIncludes(stderr, `BOX_TOKEN_FILE names ${file}, which every exec can read too`);
  assertStringIncludes(stderr, "see runbook.md#guest-token-readable");
  assert(!stderr.includes("token-in-a-readable-file"), "the warning names the file, not the token");
});
