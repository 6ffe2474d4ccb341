/**
 * A second attacker's review of the built-in tools (issue 17, after 6cd5e63): each test is an
 * attack a task makes with an ordinary grant on a folder of alice's (TOOL_OWNER), run for real as
 * root, that works on 6cd5e63.
 *
 * - sandbox_args.ts says no call can hold more memory in files than its /tmp and /dev/shm sizes,
 *   but the sandbox's own root (/) is a writable tmpfs with no size (half the host's memory), so a
 *   call fills it far past memory_bytes, and so does a memfd (memfd_create, then write, which
 *   the address-space limit never sees). Calls in parallel each hold that much: the host, and the
 *   core with it, runs out of memory.
 * - The wrapper and bubblewrap close no descriptor: whatever the core holds without close-on-exec
 *   (inherited from what started it) is open in every tool. A folder held that way is read
 *   through /proc/self/fd, outside the grant, even where its parent folders would have kept
 *   alice out.
 */
import { assert, assertStringIncludes } from "../assert.ts";
import { sandboxRuntime, shellIn, withOwnedDir, withSandbox } from "./helpers.ts";

const asRoot = Deno.uid() === 0;
const MIB = 1024 * 1024;

/** The MiB a run said it held after `label`, or NaN. */
function held(content: string, label: string): number {
  return Number(new RegExp(`${label} (\\d+) MiB`).exec(content)?.[1]);
}

Deno.test({
  name:
    "a call holds no more memory in files than its /tmp and /dev/shm sizes: the sandbox's own root (/) is not a tmpfs a tool fills past memory_bytes",
  ignore: !asRoot,
  fn: async () => {
    await withSandbox({ memory_bytes: 64 * MIB }, async (rt, dir) => {
      const ran = await rt.run(shellIn(
        "dd if=/dev/zero of=/fill bs=1M count=200 2>/dev/null; " +
          "echo root $(($(stat -c %s /fill 2>/dev/null || echo 0) / 1048576)) MiB",
        [dir],
      ));
      assertStringIncludes(ran.content, "root ");
      const mib = held(ran.content, "root");
      // /tmp and /dev/shm are 64 MiB each: nothing else may hold more than both together.
      assert(mib <= 128, `the sandbox's root held ${mib} MiB with memory_bytes at 64 MiB`);
    });
  },
});

Deno.test({
  name:
    "a call holds no more memory in files than its /tmp and /dev/shm sizes: a memfd written (not mapped) stays within memory_bytes",
  ignore: !asRoot,
  fn: async () => {
    await withSandbox({ memory_bytes: 64 * MIB }, async (rt, dir) => {
      const ran = await rt.run(shellIn(
        `python3 -c 'import os
fd = os.memfd_create("fill")
chunk = bytes(1 << 20)
n = 0
try:
    for i in range(200):
        os.write(fd, chunk)
        n += 1
        print("at", n, "MiB", flush=True)
except OSError:
    pass
print("memfd", n, "MiB")'`,
        [dir],
      ));
      // The call's memory cgroup kills the writer before it passes the limit, or the write fails.
      const at = [...ran.content.matchAll(/^at (\d+) MiB$/gm)].map((match) => Number(match[1]));
      assert(at.length > 0, ran.content);
      const mib = Math.max(...at);
      assert(mib <= 128, `a memfd held ${mib} MiB with memory_bytes at 64 MiB`);
      assert(
        ran.content.includes("memfd ") || ran.content.includes("[exit status 137]"),
        ran.content.slice(-200),
      );
    });
  },
});

Deno.test({
  name:
    "a descriptor the core holds without close-on-exec never reaches a tool: a folder outside the grant, open in the core, is not read through /proc/self/fd",
  ignore: !asRoot,
  fn: async () => {
    const rt = await sandboxRuntime();
    // root's, 0700: alice cannot reach anything under it on the host.
    const outside = await Deno.makeTempDir({ prefix: "gurt-attack-outside-" });
    const libc = Deno.dlopen("libc.so.6", {
      open: { parameters: ["buffer", "i32"], result: "i32" },
      close: { parameters: ["i32"], result: "i32" },
    });
    let fd = -1;
    try {
      await Deno.mkdir(`${outside}/kept`);
      await Deno.chmod(`${outside}/kept`, 0o755);
      await Deno.writeTextFile(`${outside}/kept/secret.txt`, "OUTSIDE-SECRET", { mode: 0o644 });
      // What a supervisor or shell that started the core may leave open in it: O_RDONLY |
      // O_DIRECTORY, no O_CLOEXEC.
      fd = libc.symbols.open(new TextEncoder().encode(`${outside}/kept\0`), 0o200000);
      assert(fd >= 0, "the test could not open its folder");
      await withOwnedDir(async (dir) => {
        const ran = await rt.run(shellIn(
          'for f in /proc/self/fd/*; do cat "$f/secret.txt" 2>/dev/null; done; echo looked',
          [dir],
        ));
        assertStringIncludes(ran.content, "looked");
        assert(
          !ran.content.includes("OUTSIDE-SECRET"),
          `a tool read a file outside its grant through descriptor ${fd}: ${ran.content}`,
        );
      });
    } finally {
      if (fd >= 0) libc.symbols.close(fd);
      libc.close();
      await rt.close();
      await Deno.remove(outside, { recursive: true });
    }
  },
});
