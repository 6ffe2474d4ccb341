/**
 * Golden bubblewrap argument lists per RunSpec: the mounts are exactly those of
 * docs/grants.md#what-an-allowed-built-in-call-gets.
 */
import { assertEquals, assertThrows } from "../assert.ts";
import {
  bwrapArgs,
  cgroupPlan,
  CgroupSlots,
  sandboxCommand,
  type SystemLayout,
  wrappedArgv,
} from "../../mod/runtime/mod.ts";
import { specFor } from "./helpers.ts";

/** A Debian 12 layout: merged /usr, and the few files of /etc a program needs. */
const LAYOUT: SystemLayout = {
  entries: [
    { path: "/usr", kind: "bind" },
    { path: "/bin", kind: "symlink", target: "usr/bin" },
    { path: "/lib", kind: "symlink", target: "usr/lib" },
    { path: "/etc/passwd", kind: "bind" },
  ],
};

const OPTIONS = { layout: LAYOUT, tmpBytes: 1048576 };

/** Everything before the mounts: the same for every tool. */
const PREFIX = [
  "--unshare-user",
  "--unshare-pid",
  "--as-pid-1",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-net",
  "--disable-userns",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL",
  "--seccomp",
  "9",
  "--hostname",
  "gurt-sandbox",
  "--clearenv",
  "--setenv",
  "PATH",
  "/usr/local/bin:/usr/bin:/bin",
  "--setenv",
  "HOME",
  "/tmp",
  "--setenv",
  "LANG",
  "C.UTF-8",
  "--ro-bind",
  "/usr",
  "/usr",
  "--symlink",
  "usr/bin",
  "/bin",
  "--symlink",
  "usr/lib",
  "/lib",
  "--ro-bind",
  "/etc/passwd",
  "/etc/passwd",
  "--proc",
  "/proc",
  "--dev",
  "/dev",
  "--size",
  "1048576",
  "--tmpfs",
  "/dev/shm",
  "--remount-ro",
  "/dev",
  "--size",
  "1048576",
  "--tmpfs",
  "/tmp",
];

Deno.test("read_file mounts the matched grant path read-only, at the same path, and runs cat", () => {
  const spec = specFor(
    { tool: "read_file", paths: ["/home/kyle", "/home/kyle/notes"] },
    "read_file",
    { path: "/home/kyle/notes/a.md" },
  );
  assertEquals(bwrapArgs(spec, OPTIONS), [
    ...PREFIX,
    "--ro-bind-fd",
    "3",
    "/home/kyle/notes",
    "--remount-ro",
    "/",
    "--chdir",
    "/tmp",
    "--",
    "/bin/cat",
    "--",
    "/home/kyle/notes/a.md",
  ]);
});

Deno.test("write_file mounts the matched grant path writable and passes the path as an argument, never as shell text", () => {
  const spec = specFor({ tool: "write_file", paths: ["/srv/out"] }, "write_file", {
    path: "/srv/out/$(reboot).txt",
    content: "x",
  });
  assertEquals(bwrapArgs(spec, OPTIONS), [
    ...PREFIX,
    "--bind-fd",
    "3",
    "/srv/out",
    "--remount-ro",
    "/",
    "--chdir",
    "/tmp",
    "--",
    "/bin/sh",
    "-c",
    'exec /bin/cat > "$1"',
    "gurt-write",
    "/srv/out/$(reboot).txt",
  ]);
});

Deno.test("shell mounts every path of the grant writable and starts in cwd", () => {
  const spec = specFor({ tool: "shell", paths: ["/srv/a", "/srv/b"] }, "shell", {
    command: "ls",
    cwd: "/srv/b/sub",
  });
  assertEquals(bwrapArgs(spec, OPTIONS), [
    ...PREFIX,
    "--ro-bind-data",
    "0",
    "/.gurt/command",
    "--bind-fd",
    "3",
    "/srv/a",
    "--bind-fd",
    "4",
    "/srv/b",
    "--remount-ro",
    "/",
    "--chdir",
    "/srv/b/sub",
    "--",
    "/bin/sh",
    "-c",
    "exec </dev/null 2>&1; . /.gurt/command",
  ]);
  // The command itself is in no argv: it goes on stdin, which bubblewrap makes that file.
  assertEquals(sandboxCommand(spec).stdin, "ls\n");
});

Deno.test("shell under a grant with no paths mounts nothing and starts in the private /tmp", () => {
  const spec = specFor({ tool: "shell" }, "shell", { command: "true" });
  assertEquals(spec.mounts, []);
  assertEquals(spec.egress, null);
  assertEquals(bwrapArgs(spec, OPTIONS), [
    ...PREFIX,
    "--ro-bind-data",
    "0",
    "/.gurt/command",
    "--remount-ro",
    "/",
    "--chdir",
    "/tmp",
    "--",
    "/bin/sh",
    "-c",
    "exec </dev/null 2>&1; . /.gurt/command",
  ]);
  assertEquals(sandboxCommand(spec).stdin, "true\n");
});

Deno.test("http_fetch has egress and no mounts, and never becomes a sandbox command", () => {
  const spec = specFor({ tool: "http_fetch", hosts: ["*.example.com"] }, "http_fetch", {
    url: "https://www.example.com/",
  });
  assertEquals(spec.mounts, []);
  assertEquals(spec.egress, ["*.example.com"]);
  assertThrows(() => bwrapArgs(spec, OPTIONS), Error, "does not run in the sandbox");
});

Deno.test("the wrapper joins the call's pids and memory cgroup slots, sets the memory limit and opens the filter before bubblewrap, and hands on each mount's mode", () => {
  const plan = cgroupPlan(16, { slot: 3, root: "/sys/fs/cgroup/pids/gurt" });
  const argv = wrappedArgv(["--unshare-net", "--", "/bin/true"], {
    bwrap: "bwrap",
    cgroup: plan,
    memoryBytes: 64 * 1024 * 1024,
    filter: "/var/lib/gurt/run/tool-seccomp.bpf",
    mounts: [{ path: "/srv/a", writable: false }, { path: "/srv/b", writable: true }],
  });
  assertEquals(argv.slice(0, 2), ["/bin/bash", "-c"]);
  assertEquals(argv.slice(3), [
    "gurt-sandbox",
    "/sys/fs/cgroup/pids/gurt",
    "call-3",
    "16",
    "/sys/fs/cgroup/memory/gurt",
    String(128 * 1024 * 1024),
    "65536",
    "/var/lib/gurt/run/tool-seccomp.bpf",
    "/usr/bin/setpriv",
    "2",
    "r",
    "/srv/a",
    "w",
    "/srv/b",
    "bwrap",
    "--unshare-net",
    "--",
    "/bin/true",
  ]);
  const none = wrappedArgv(["--", "/bin/true"], {
    bwrap: "bwrap",
    cgroup: null,
    memoryBytes: 1024,
    filter: "/f",
    mounts: [],
  });
  assertEquals(none.slice(3), [
    "gurt-sandbox",
    "",
    "",
    "0",
    "",
    "2048",
    "1",
    "/f",
    "/usr/bin/setpriv",
    "0",
    "bwrap",
    "--",
    "/bin/true",
  ]);
});

Deno.test("cgroup slots: a call takes the lowest free slot, and a slot given back is taken again", () => {
  const slots = new CgroupSlots();
  assertEquals([slots.take(), slots.take(), slots.take()], [0, 1, 2]);
  slots.give(1);
  assertEquals(slots.take(), 1);
  assertEquals(slots.take(), 3);
});
