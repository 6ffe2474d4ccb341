/**
 * An attacker's review of the task sandbox and its egress proxy (issue 18), as the owner of a task:
 * each test is something a task's own processes (its uid, inside its sandbox) try, to reach past
 * their three doors, escape their limits, or make the core do something for them. A test marked
 * `ignore: true` fails on HEAD: the comment above it says why and what would fix it. The rest hold
 * on HEAD and pin what the review checked. As root, like tests/sandbox/task_sandbox_test.ts.
 */
import { assert, assertEquals } from "../assert.ts";
import { exists, startBox, startServe, until } from "../kit/mod.ts";
import { endTaskGroup, probeCgroups, unmountTaskHomes } from "../../mod/sandbox/mod.ts";
import { runInBox, withSandboxBox } from "../sandbox/sandbox_kit.ts";
import { removeTaskUser, taskUsers } from "../../mod/core/task_users.ts";
import {
  connectProxy,
  startProxy,
  startRawOrigin,
  type TestProxy,
  writeAll,
} from "../egress/egress_kit.ts";

const asRoot = Deno.uid() === 0;
const USER = { uid: 61237, gid: 61237 };

/** Runs a bash script as a task's worker in a sandbox made with these limits; its output. */
async function inSandbox(
  script: string,
  limits: { memoryBytes: number; tmpBytes: number; homeBytes?: number },
): Promise<{ code: number; out: string; err: string }> {
  let run: { code: number; out: string; err: string } | undefined;
  await withSandboxBox(USER, async (box) => {
    run = await runInBox(box, script, { shell: "/bin/bash" });
  }, limits);
  return run!;
}

/** `promise`'s value if it settles within `ms`, else null (a rejection is null too). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), ms));
  try {
    return await Promise.race([promise.catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

const MB = 1024 * 1024;

// Holds on HEAD. A new network namespace has its own abstract Unix sockets (X11's, D-Bus's and
// any other's), its own pids in /proc, and no /run, /var or /sys.
Deno.test({
  name: "held: host abstract sockets, host pids, /run, /var and /sys are out of a task's sight",
  ignore: !asRoot,
  fn: async () => {
    const name = `gurt-review-${crypto.randomUUID()}`;
    const host = await new Deno.Command("python3", {
      args: [
        "-c",
        `
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(b"\\0${name}"); s.listen(5); s.settimeout(30)
print("up", flush=True)
try:
    s.accept(); print("reached", flush=True)
except Exception:
    print("quiet", flush=True)`,
      ],
      stdout: "piped",
    }).spawn();
    const reader = host.stdout.getReader();
    await reader.read(); // "up"
    const run = await inSandbox(
      `python3 -c "
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(b'\\0${name}'); print('abstract open')
except OSError:
    print('abstract refused')"
       for p in /run /var /sys /tmp/.X11-unix; do [ -e $p ] && echo "seen $p"; done
       ls /proc | grep -c '^[0-9]'`,
      { memoryBytes: 256 * MB, tmpBytes: 64 * MB },
    );
    host.kill("SIGTERM");
    reader.releaseLock();
    await host.stdout.cancel();
    await host.status;
    const lines = run.out.trim().split("\n");
    assertEquals(lines[0], "abstract refused", run.err);
    assertEquals(lines.length, 2, `something of the host is seen: ${run.out}`);
    assert(Number(lines[1]) <= 5, `host pids are seen: ${run.out}`);
  },
});

// FIXED (the task init relays the broker socket, at most 64 connections at once, and each task
// process may hold 4096 descriptors); it failed before: the core died. A task's processes inherit the core's RLIMIT_NOFILE (20000 here)
// and its broker socket (BOX_SOCKET, bound into the sandbox) is a Deno.serve with no limit on
// connections. Two processes of one task open ~20000 connections and hold them: every one is an
// fd of the core, the core's accept fails with EMFILE, and that rejection is uncaught in the
// "gurt-core" worker: `gurt serve` exits 1 ("Http: Error: Too many open files"), taking every
// task, the admin socket and the portal with it. Restarted, it reopens the task, which does it
// again. Fix: serve each task's broker socket through a listener that holds at most N (say 64)
// connections of that task, closing any past that at once and reading no header for longer than
// a few seconds (as the egress proxy's 256 and 10 s); catch accept errors so EMFILE is a refusal,
// never the core's end; and give the sandbox a small RLIMIT_NOFILE in STAGE_ONE (`ulimit -n 1024`
// before setpriv), which bounds one process but not a task's 1024 processes, so the cap is needed.
Deno.test({
  name: "a task holding thousands of connections to its broker socket leaves the core running",
  fn: async () => {
    const home = await Deno.makeTempDir({ prefix: "gurt-review-" });
    await Deno.mkdir(`${home}/grants`);
    const serve = await startServe(home);
    try {
      assertEquals(serve.exited, null, serve.stderr());
      const started = await serve.admin("POST", "/tasks", {
        worker: {
          kind: "cmd",
          command: [
            "/usr/bin/python3",
            "-c",
            `
import os, socket, time
me = "a" if os.fork() else "b"
held, why, misses = [], "", 0
while len(held) < 15000 and misses < 20:
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(1)
        s.connect(os.environ["BOX_SOCKET"]); held.append(s); misses = 0
    except (BlockingIOError, socket.timeout):
        s.close(); misses += 1; time.sleep(0.01)
    except Exception as e:
        why = repr(e); break
open("held." + me, "w").write("%d %s" % (len(held), why))
time.sleep(600)`,
          ],
        },
        tools: ["example.echo"],
        budgetCents: null,
      });
      assertEquals(started.status, 200, JSON.stringify(started.body));
      const id = started.body.task.id as string;
      const held = `${home}/tasks/${id}/home/held`;
      let ended: Deno.CommandStatus | null = null;
      serve.child.status.then((status) => ended = status);
      await until(
        async () => ended !== null || (await exists(`${held}.a`) && await exists(`${held}.b`)),
        120_000,
      );
      assertEquals(ended, null, `gurt serve ended: ${serve.stderr().slice(-400)}`);
      const listed = await within(serve.admin("GET", "/tasks"), 10_000);
      const said = serve.stderr().slice(-300);
      assertEquals(listed?.status, 200, `the owner's admin socket does not answer: ${said}`);
    } finally {
      await serve.kill9();
      // What the core would have done at the task's end: its user, its cgroup and its home's
      // mount go.
      const { kind } = await probeCgroups();
      for (const user of await taskUsers()) {
        if (user.home !== home) continue;
        await removeTaskUser(user);
        await endTaskGroup(user.task, kind);
      }
      await unmountTaskHomes(`${home}/tasks`);
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});

// STILL FAILS, LESS (cgroup v1, as on this box): STAGE_ONE now sets memory.kmem.tcp.limit_in_bytes
// to the task's memory, and the 512 MB queued before is about 190 MB: past the limit the kernel
// still grants each socket its minimum buffer, so the bound is the task's descriptors (4096 a
// process) times that minimum, not memory_bytes. On cgroup v2 socket memory is in memory.max.
// Before: with a 64 MB memory limit the worker queues 512 MB
// in TCP connections on its own lo, and the box's free memory falls by as much. Socket buffers are
// kernel memory that cgroup v1 counts only in memory.kmem.tcp, which STAGE_ONE never limits, so
// they are charged to no limit of the task; past net.ipv4.tcp_mem (about 9% of RAM) every TCP
// socket of the host is under pressure: the egress proxy's and the model relay's origins, other
// tasks. Fix: in STAGE_ONE's v1 branch, `echo $mem > $c/memory/gurt-tasks/$task/
// memory.kmem.tcp.limit_in_bytes || fail "cannot limit the socket memory of task $task"` (which
// also turns TCP accounting on for the group); on v2 socket memory is in memory.max already.
Deno.test({
  name: "a task's TCP buffers on its own lo count toward its memory limit",
  ignore: true,
  fn: async () => {
    const run = await inSandbox(
      `python3 -c "
import socket
srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1000)
held, total, chunk = [], 0, b'x' * 65536
while total < 512 * 2**20 and len(held) < 2000:
    c = socket.create_connection(srv.getsockname()); s, _ = srv.accept()
    c.setblocking(False)
    while True:
        try: total += c.send(chunk)
        except BlockingIOError: break
    held.append((c, s))
    print(total // 2**20, flush=True)"`,
      { memoryBytes: 64 * MB, tmpBytes: 64 * MB },
    );
    const queued = Number(run.out.trim().split("\n").at(-1) ?? 0);
    assert(queued < 128, `${queued} MB queued in sockets past a 64 MB limit`);
  },
});

// FIXED (issue 28: each home is an ext4 image of [tasks] home_bytes, mounted by the core, here at
// 64 MB; mod/sandbox/task_home.ts); it failed before: a task's home (tasks/<id>/home on the box
// home's disk) had no size limit. With a
// 64 MB memory limit and a 64 MB /tmp, the worker writes 256 MB there (page cache is reclaimed, so
// memory.limit does not stop it), and would go on to fill the disk the audit log is on: the next
// Decision record fails, the writer answers audit_unavailable and writes nothing more until a
// restart, so every task's every call is denied. Fix: bound the home as /tmp is bounded: a
// [tasks] home_bytes limit (default tmp_bytes), enforced with a project quota on the home folder
// (ext4/xfs prjquota) or the home as a loop-mounted image of that size; and keep headroom for the
// audit log (refuse to start tasks while its filesystem has less than, say, 1 GB free). Here the
// limit is asked for at tmpBytes, the one bound the sandbox has for a task's files.
Deno.test({
  name: "a task's home is bounded: it cannot write 256 MB with 64 MB of memory and of /tmp",
  ignore: !asRoot,
  fn: async () => {
    const run = await inSandbox(
      `dd if=/dev/zero of="$HOME/fill" bs=1M count=256 conv=fsync 2>/dev/null; echo status $?
       du -m "$HOME/fill" | cut -f1; rm -f "$HOME/fill"`,
      { memoryBytes: 64 * MB, tmpBytes: 64 * MB, homeBytes: 64 * MB },
    );
    const [status, megabytes] = run.out.trim().split("\n");
    assert(status !== "status 0" && Number(megabytes) <= 64, `the home took ${megabytes} MB`);
  },
});

// FIXED (each task gets its own passwd and group); it failed before (low): the sandbox binds the host's /etc/passwd and /etc/group whole, and each
// task user's comment there names its task and its box home ("gurt task <id> %2Fvar%2Flib%2Fgurt"),
// so every task reads the ids (and uids) of every other task of the box, live or left by a crash,
// and of other homes' tasks on the same host. Issue 18: "/etc is limited to what programs need".
// Fix: bind generated copies instead (--ro-bind-data of a passwd with root, nobody and the task's
// own user, and the groups to match), written by the core for each sandbox.
Deno.test({
  name: "a task's /etc/passwd names no other task's user",
  fn: async () => {
    const box = await startBox({ core: { asRoot: true } });
    try {
      const other = await box.admin("POST", "/tasks", {
        worker: { kind: "cmd", command: ["/bin/sleep", "120"] },
        tools: ["example.echo"],
        budgetCents: null,
      });
      const otherId = other.body.task.id as string;
      const answer = await box.admin("POST", "/tasks", {
        worker: { kind: "cmd", command: ["/bin/sh", "-c", "cat /etc/passwd /etc/group > seen"] },
        tools: ["example.echo"],
        budgetCents: null,
      });
      const id = answer.body.task.id as string;
      const seen = `${box.home}/tasks/${id}/home/seen`;
      await until(() => exists(seen), 30_000);
      await until(async () => (await box.admin("GET", `/tasks/${id}`)).body.task.state === "done");
      const text = await Deno.readTextFile(seen);
      assert(!text.includes(`box-${otherId}`), "another task's user is in the task's passwd");
      await box.admin("POST", `/tasks/${otherId}/stop`);
    } finally {
      await box.close();
    }
  },
});

/** A proxy that lets plain.test (mapped to the origin on loopback) through on the origin's port. */
async function plainProxy(port: number): Promise<TestProxy> {
  return await startProxy({
    hosts: [`plain.test:${port}`],
    resolve: { "plain.test": "127.0.0.1" },
    allowPrivate: ["plain.test"],
  });
}

// Failed on b68b083: the pipelining fix (d96f9a0) frames the body by its Content-Length, but a
// `Connection: content-length` header made parseRequestHead drop Content-Length from the head it
// forwards (every field Connection names is dropped as hop-by-hop). The origin then got a POST
// with no body and, after it, the "body": a second request with Host: evil.test, on a connection
// to plain.test's address — the vhost hop the Host check and the pipelining fix were to stop.
// (Connection: transfer-encoding did the same to a chunked body.) Now a request whose Connection
// header names Content-Length, Transfer-Encoding or Host is refused as bad_request, and those
// three are never dropped as hop-by-hop (tests/egress/request_head_test.ts, refusal_test.ts).
Deno.test({
  name: "Connection: content-length does not let a body through as a second request",
  fn: async () => {
    const origin = startRawOrigin();
    const proxy = await plainProxy(origin.port);
    try {
      const second = "GET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n";
      const conn = await connectProxy(proxy);
      await writeAll(
        conn,
        `POST http://plain.test:${origin.port}/a HTTP/1.1\r\nConnection: content-length\r\n` +
          `Content-Length: ${second.length}\r\n\r\n${second}`,
      );
      const sent = await within(origin.waitFor(second.length + 40), 2000);
      conn.close();
      assert(
        sent === null || !sent.includes("evil.test") || sent.includes("Content-Length"),
        `the origin received a request for evil.test: ${JSON.stringify(sent)}`,
      );
    } finally {
      await proxy.close();
      await origin.close();
    }
  },
});

// Failed on b68b083: the same request the Host check refuses in absolute form (host_mismatch)
// passed through a CONNECT to the same listed host and port: a tunnel that was not TLS was let
// through on any port but 443, unread, so `Host: evil.test` reached plain.test's address (any CDN
// or shared host behind a listed name, on port 80 or a listed port). Now a tunnel (CONNECT or
// SOCKS5, any port) carries TLS naming its host, or one plain HTTP request in origin form whose
// Host names its host and port, forwarded with Connection: close and nothing after it (Node's
// fetch and Deno's send http:// URLs through tunnels); anything else is closed as not_tls, and
// this request is answered 403 host_mismatch. TLS with a matching SNI and another Host inside
// (domain fronting, or ECH) stays out of the proxy's sight: docs/threat-model.md says so.
Deno.test({
  name: "a plain-HTTP request through a CONNECT tunnel is held to the tunnel's host too",
  fn: async () => {
    const origin = startRawOrigin();
    const proxy = await plainProxy(origin.port);
    try {
      const conn = await connectProxy(proxy);
      await writeAll(
        conn,
        `CONNECT plain.test:${origin.port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n`,
      );
      const sent = await within(origin.waitFor(20), 2000);
      conn.close();
      assert(
        sent === null || !sent.includes("evil.test"),
        `the origin received a request for evil.test: ${JSON.stringify(sent)}`,
      );
    } finally {
      await proxy.close();
      await origin.close();
    }
  },
});
