/**
 * Descriptors the core inherited never reach a task. A `gurt serve` started by a supervisor or a
 * test harness that left descriptors open without close-on-exec passes them to every process it
 * starts; the sandbox's processes must hold none of them: a task's worker has 0, 1 and 2 only, and
 * the task init closes every other descriptor before it opens its doors. As root, with real
 * bubblewrap.
 */
import { assert, assertEquals, assertNotIncludes } from "../assert.ts";
import { listedFds, secretFile } from "../kit/mod.ts";
import { taskInitElf } from "../../mod/sandbox/task_init.ts";

const USER = { uid: 61237, gid: 61237 };
const MARKER = "gurt-inherited-secret-7d1c";
const probe = new URL("./inherited_fds_probe.ts", import.meta.url).pathname;

Deno.test("a core's inherited descriptors reach no process of a task's sandbox: the worker holds 0, 1 and 2 only", async () => {
  const secret = await secretFile(MARKER, "gurt-inherited-fds-");
  try {
    // The core (the probe) starts with fds 3, 7 and 251 open on the secret, without close-on-exec.
    const run = await new Deno.Command("bash", {
      args: [
        "-c",
        'exec 3<"$1" 7<"$1" 251<"$1"; shift; exec "$@"',
        "gurt-inherited-fds",
        secret.path,
        Deno.execPath(),
        "run",
        "--allow-all",
        "--no-check",
        probe,
        String(USER.uid),
        String(USER.gid),
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assertEquals(run.code, 0, stderr);
    const seen: {
      code: number;
      out: string;
      err: string;
      held: { pid: number; name: string; fds: { fd: number; target: string }[] }[];
    } = JSON.parse(new TextDecoder().decode(run.stdout));
    assertEquals(seen.code, 0, seen.err);
    assertNotIncludes(seen.out, MARKER, `the worker read the core's secret: ${seen.out}`);
    const worker = listedFds(seen.out);
    assertEquals(worker.map((entry) => entry.fd), [0, 1, 2], seen.out);
    assertEquals(worker[0].target, "/dev/null", "the worker's stdin, which bubblewrap closed");
    // Seen from the host while the worker waits: bubblewrap's outer process, the init, the worker.
    assertEquals(seen.held.map((process) => process.name), ["bwrap", "init", "bash"]);
    for (const process of seen.held) {
      const inherited = process.fds.filter((entry) =>
        entry.target === secret.path || [7, 251].includes(entry.fd)
      );
      assertEquals(inherited, [], `${process.name} (pid ${process.pid}) holds the core's fds`);
    }
  } finally {
    await Deno.remove(secret.dir, { recursive: true });
  }
});

/** A seccomp filter that answers close_range (436 on x86-64) ENOSYS, as an older kernel does. */
function noCloseRange(): Uint8Array {
  const program: [number, number, number, number][] = [
    [0x20, 0, 0, 0], // load the call's number
    [0x15, 0, 1, 436], // close_range?
    [0x06, 0, 0, 0x00050000 | 38], // ERRNO(ENOSYS)
    [0x06, 0, 0, 0x7fff0000], // ALLOW
  ];
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach(([code, jt, jf, k], i) => {
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k >>> 0, true);
  });
  return bytes;
}

Deno.test("without close_range the task init still closes every inherited descriptor, those past its open-files limit too", async () => {
  const secret = await secretFile(MARKER, "gurt-inherited-fds-");
  try {
    const init = `${secret.dir}/init`;
    await Deno.writeFile(init, taskInitElf(), { mode: 0o755 });
    const filter = `${secret.dir}/filter.bpf`;
    await Deno.writeFile(filter, noCloseRange());
    // Fds 7, 251 and 5000 on the secret, stdin closed, then an open-files limit of 1024: lowering
    // it closes nothing, so a loop up to the limit would leave fd 5000 open.
    const wrapper = `ulimit -n 8192
      exec 0<&- 7<"$1" 251<"$1" 5000<"$1"
      ulimit -Sn 1024
      filter=$2
      shift 2
      exec bwrap --dev-bind / / --seccomp 9 9<"$filter" -- "$@"`;
    const script = `ulimit -Sn; ls -l /proc/$$/fd
      python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True); print("close_range",
libc.syscall(436, 100000, 100001, 0), ctypes.get_errno())'
      for fd in 7 251 5000; do echo "fd $fd: $(head -c 100 <&$fd 2>&1)"; done`;
    const run = (program: string[]) =>
      new Deno.Command("bash", {
        args: ["-c", wrapper, "gurt-inherited-fds", secret.path, filter, ...program],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

    // Without the init: the program holds the three, and close_range is refused.
    const bare = await run(["/bin/bash", "-c", script]);
    const bareOut = decode(bare.stdout);
    assertEquals(bare.code, 0, decode(bare.stderr));
    assertEquals(bareOut.split("\n")[0], "1024");
    assert(bareOut.includes("close_range -1 38"), `close_range is not refused: ${bareOut}`);
    const bareFds = listedFds(bareOut).map((entry) => entry.fd);
    assert([7, 251, 5000].every((fd) => bareFds.includes(fd)), bareOut);
    assert(bareOut.includes(`fd 5000: ${MARKER}`), bareOut);

    // Through the init: 0, 1 and 2 only, stdin /dev/null, and nothing of the secret.
    const through = await run([init, "--", "/bin/bash", "-c", script]);
    const out = decode(through.stdout);
    assertEquals(through.code, 0, decode(through.stderr));
    assert(out.includes("close_range -1 38"), `close_range is not refused: ${out}`);
    assertNotIncludes(out, MARKER, `the program read the secret: ${out}`);
    assertEquals(listedFds(out).map((entry) => entry.fd), [0, 1, 2], out);
    assertEquals(listedFds(out)[0].target, "/dev/null");
  } finally {
    await Deno.remove(secret.dir, { recursive: true });
  }
});
