/**
 * Descriptors the core inherited never reach a built-in tool. A `gurt serve` started by a
 * supervisor or a test harness that left descriptors open without close-on-exec passes them to
 * every process it starts; the wrapper's first stage (sandbox_process.ts) closes them, as root,
 * before anything runs as the tool's uid, so neither the command nor bubblewrap's outer process
 * holds one. Without that loop the command lists fds 7, 251 and 5000 and reads the secret through
 * each. As root, with real bubblewrap.
 */
import { assert, assertEquals, assertNotIncludes } from "../assert.ts";
import { listedFds, secretFile } from "../kit/mod.ts";

const MARKER = "gurt-tool-inherited-secret-41f9";
const probe = new URL("./inherited_fds_probe.ts", import.meta.url).pathname;

Deno.test("a core's inherited descriptors reach no process of a shell call: the command holds 0, 1, 2 and its own command file only", async () => {
  const secret = await secretFile(MARKER, "gurt-tool-fds-");
  try {
    // The core (the probe) starts with fds 3, 7, 251 and 5000 open on the secret, without
    // close-on-exec, 5000 past its open-files limit of 1024 (lowering the limit closes nothing).
    const run = await new Deno.Command("bash", {
      args: [
        "-c",
        'ulimit -n 8192; exec 3<"$1" 7<"$1" 251<"$1" 5000<"$1"; ulimit -Sn 1024; shift; exec "$@"',
        "gurt-tool-fds",
        secret.path,
        Deno.execPath(),
        "run",
        "--allow-all",
        "--no-check",
        probe,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assertEquals(run.code, 0, stderr);
    const seen: {
      result: { content: string; truncated: boolean };
      held: { pid: number; name: string; fds: { fd: number; target: string }[] }[];
    } = JSON.parse(new TextDecoder().decode(run.stdout));
    const out = seen.result.content;
    assert(out.endsWith("[exit status 0]"), out);
    assertNotIncludes(out, MARKER, `the tool read the core's secret: ${out}`);
    // The shell's own: stdin /dev/null, stdout and stderr the one pipe, the command file it sources.
    assertEquals(listedFds(out), [
      { fd: 0, target: "/dev/null" },
      { fd: 1, target: listedFds(out)[1].target },
      { fd: 10, target: "/.gurt/command (deleted)" },
      { fd: 2, target: listedFds(out)[1].target },
    ], out);
    assert(listedFds(out)[1].target.startsWith("pipe:"), out);
    // Seen from the host while the command waits: bubblewrap's outer process and the command.
    assertEquals(seen.held.map((process) => process.name), ["bwrap", "sh"]);
    for (const process of seen.held) {
      const inherited = process.fds.filter((entry) =>
        entry.target === secret.path || [7, 251, 5000].includes(entry.fd)
      );
      assertEquals(inherited, [], `${process.name} (pid ${process.pid}) holds the core's fds`);
      assert(process.fds.every((entry) => entry.fd <= 10), JSON.stringify(process));
    }
  } finally {
    await Deno.remove(secret.dir, { recursive: true });
  }
});
