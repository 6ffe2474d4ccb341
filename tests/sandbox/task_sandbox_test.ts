/**
 * A task's sandbox, made for real (as root: a task user's uid, cgroups, bubblewrap), with a shell
 * as its worker: what it sees, where it may write, which network it has, its limits, and its one
 * door on loopback. Each test is an attack a task's own processes could try.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { TASKS_CGROUP } from "../../mod/sandbox/mod.ts";
import { assertBuildsAsCheckedIn } from "../kit/mod.ts";
import { runInBox, withSandboxBox } from "./sandbox_kit.ts";

const decoder = new TextDecoder();
const USER = { uid: 61235, gid: 61235 };
const root = new URL("../../", import.meta.url).pathname;

Deno.test("the worker runs as the task's user, as pid 2 of its own namespace, and its status comes back", async () => {
  await withSandboxBox(USER, async (box) => {
    const run = await runInBox(box, 'id -u; id -G; echo $$; ls /proc | grep -c "^[0-9]"; exit 7');
    assertEquals(run.code, 7, run.err);
    const [uid, groups, pid, processes] = run.out.trim().split("\n");
    assertEquals(uid, String(USER.uid));
    assertEquals(groups, String(USER.gid));
    assertEquals(pid, "2", "the task init is pid 1, the worker the next");
    assert(Number(processes) <= 4, `the task sees only its own processes: ${processes}`);
  });
});

Deno.test("only lo exists, and nothing on the host's loopback or its Unix sockets is reachable", async () => {
  await withSandboxBox(USER, async (box) => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    const unix = `${box.dir}/host.sock`;
    const hostSocket = Deno.listen({ transport: "unix", path: unix });
    await Deno.chmod(unix, 0o777);
    let reached = false;
    const accepting = (async () => {
      for await (const conn of listener) {
        reached = true;
        conn.close();
      }
    })();
    try {
      const run = await runInBox(
        box,
        `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '
         bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' 2>/dev/null && echo tcp-open || echo tcp-refused
         python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('${unix}')" \\
           2>/dev/null && echo unix-open || echo unix-refused
         getent hosts example.com >/dev/null && echo dns || echo no-dns`,
      );
      assertEquals(run.out.trim().split("\n"), ["lo", "tcp-refused", "unix-refused", "no-dns"]);
      assert(!reached, "the host's loopback listener was reached from the task");
    } finally {
      listener.close();
      hostSocket.close();
      await accepting;
    }
  });
});

Deno.test("the filesystem: home writable, /tmp private, host folders, secrets and the box home unseen", async () => {
  await withSandboxBox(USER, async (box) => {
    const secret = `${box.dir}/run/secret.txt`;
    await Deno.writeTextFile(secret, "owner only");
    const outside = `${box.dir}/world-readable.txt`;
    await Deno.writeTextFile(outside, "not the task's");
    await Deno.chmod(outside, 0o644);
    const marker = `gurt-sandbox-${box.task}`;
    const run = await runInBox(
      box,
      `for p in /etc/shadow /root /home /srv /opt /var /etc/box ${outside} ${secret} ${box.dir}/run; do
         [ -e "$p" ] && echo "seen $p"
       done
       echo hi > "$HOME/made.txt" && echo home-written
       echo hi > /tmp/${marker} && echo tmp-written
       echo hi > /usr/${marker} 2>/dev/null && echo usr-written
       echo hi > /${marker} 2>/dev/null && echo root-written
       chmod u+s "$HOME/made.txt" 2>/dev/null && echo setuid-set
       ls ${root}main.ts >/dev/null && echo program-seen
       echo hi > ${root}${marker} 2>/dev/null && echo program-written
       true`,
    );
    assertEquals(run.out.trim().split("\n"), [
      "home-written",
      "tmp-written",
      "program-seen",
    ], run.err);
    assertEquals(await Deno.readTextFile(`${box.home}/made.txt`), "hi\n");
    const made = await Deno.stat(`${box.home}/made.txt`);
    assertEquals(made.uid, USER.uid);
    assertEquals(made.mode! & 0o4000, 0, "no setuid bit");
    for (const path of [`/tmp/${marker}`, `/usr/${marker}`, `/${marker}`, `${root}${marker}`]) {
      assert(!(await Deno.stat(path).then(() => true, () => false)), `${path} reached the host`);
    }
  });
});

Deno.test("a door: the task init relays 127.0.0.1:PORT inside to the core's Unix socket", async () => {
  await withSandboxBox(USER, async (box) => {
    const door = `${box.dir}/egress.sock`;
    const server = Deno.serve(
      { path: door, onListen: () => {} },
      async (request) => new Response(`door saw ${request.method} ${await request.text()}`),
    );
    await Deno.chown(door, USER.uid, USER.gid);
    try {
      const run = await runInBox(
        box,
        "curl -s --noproxy '*' -X POST --data-binary ping http://127.0.0.1:3128/x",
        { doors: [{ port: 3128, socket: door }] },
      );
      assertEquals(run.out, "door saw POST ping", run.err);
    } finally {
      await server.shutdown();
    }
  });
});

Deno.test("a Unix door: the task init listens at the path the task knows and relays at most 64 connections at once", async () => {
  await withSandboxBox(USER, async (box) => {
    const door = `${box.dir}/broker.sock`;
    let open = 0;
    let most = 0;
    const listener = Deno.listen({ transport: "unix", path: door });
    await Deno.chown(door, USER.uid, USER.gid);
    const held: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const conn of listener) {
        held.push(conn);
        most = Math.max(most, ++open);
      }
    })();
    try {
      const run = await runInBox(
        box,
        `python3 -c "
import socket, sys
socks = []
for i in range(100):
    s = socket.socket(socket.AF_UNIX); s.settimeout(2)
    try: s.connect('${door}'); socks.append(s)
    except Exception as e: print('refused', repr(e)); break
print('opened', len(socks))
sys.stdout.flush()
import time; time.sleep(1)"`,
        { doors: [{ path: door, socket: door }] },
      );
      assertStringIncludes(run.out, "opened", run.err);
      assert(most > 0, "the door was reached");
      assert(most <= 64, `${most} connections reached the core at once`);
    } finally {
      listener.close();
      for (const conn of held) conn.close();
      await accepting;
    }
  });
});

Deno.test("a task's /etc/passwd and /etc/group name root, nobody and its own user only; its open files are capped", async () => {
  await withSandboxBox(USER, async (box) => {
    const run = await runInBox(
      box,
      "cut -d: -f1,3 /etc/passwd; cut -d: -f1,3 /etc/group; ulimit -n; ulimit -Hn",
    );
    assertEquals(run.out.trim().split("\n"), [
      "root:0",
      `box-${box.task}:${USER.uid}`,
      "nobody:65534",
      "root:0",
      `box-${box.task}:${USER.gid}`,
      "nogroup:65534",
      "4096",
      "4096",
    ], run.err);
  });
});

Deno.test("limits: the task's processes are capped by its cgroup", async () => {
  await withSandboxBox(USER, async (box) => {
    const run = await runInBox(
      box,
      `(i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i+1)); done) 2>/dev/null
       set -- /proc/[0-9]*; echo $#`, // builtins only: no fork is left
    );
    const processes = Number(run.out.trim());
    assert(processes > 2 && processes <= 16, `at most max_processes: ${run.out} ${run.err}`);
    const group = `/sys/fs/cgroup/pids/${TASKS_CGROUP}/${box.task}/pids.max`;
    if (await Deno.stat(group).then(() => true, () => false)) {
      assertEquals((await Deno.readTextFile(group)).trim(), "16", "the task's own pids cgroup");
    }
  }, { maxProcesses: 16 });
});

Deno.test("limits: what /tmp and /dev/shm hold counts toward the task's memory", async () => {
  await withSandboxBox(USER, async (box) => {
    // Each file fits its 64 MB tmpfs; both together pass the 96 MB the task may use.
    const run = await runInBox(
      box,
      `head -c 60m /dev/zero > /tmp/a; echo a $?
       head -c 60m /dev/zero > /dev/shm/b; echo b $?`,
    );
    assert(run.out.includes("a 0"), `the first 60 MB fit: ${run.out}`);
    assert(!run.out.includes("b 0"), `120 MB held past a 96 MB limit: ${run.out}`);
  }, { memoryBytes: 96 * 1024 * 1024 });
});

Deno.test("the end of a task kills what it left running and removes its cgroup", async () => {
  await withSandboxBox(USER, async (box) => {
    const child = await box.sandboxes.spawn({
      task: box.task,
      home: box.home,
      doors: [],
      readOnly: [],
      argv: ["/bin/sh", "-c", "sleep 300 & sleep 300 & echo up; wait"],
      env: { PATH: "/usr/bin:/bin" },
      user: USER,
    });
    const reader = child.stdout.getReader();
    assertStringIncludes(decoder.decode((await reader.read()).value), "up");
    Deno.kill(-child.pid, "SIGKILL");
    await child.status;
    await box.sandboxes.end(box.task);
    // The task init may linger a moment as a zombie of the box's init, which reaps it: not alive.
    const ps = await new Deno.Command("ps", { args: ["-u", String(USER.uid), "-o", "stat=,pid="] })
      .output();
    const alive = decoder.decode(ps.stdout).split("\n").filter((line) => /^[^Z\s]/.test(line));
    assertEquals(alive, [], "no process of the task is left");
    const group = `/sys/fs/cgroup/pids/${TASKS_CGROUP}/${box.task}`;
    assert(!(await Deno.stat(group).then(() => true, () => false)), "its cgroup is removed");
    reader.releaseLock();
    await child.stderr.cancel();
  });
});

Deno.test("the checked-in task init is exactly what task_init.c builds to", async () => {
  await assertBuildsAsCheckedIn(
    { script: "build_task_init.sh", elf: "sandbox/task_init_elf.ts" },
    "init",
  );
});

Deno.test("a task's process may set its own parent-death signal to any signal (Codex gives each command SIGTERM), and no setuid file may be made", async () => {
  await withSandboxBox(USER, async (box) => {
    const script = [
      "import ctypes, os",
      "libc = ctypes.CDLL(None, use_errno=True)",
      "print(libc.prctl(1, 15, 0, 0, 0), libc.prctl(1, 0, 0, 0, 0))",
      "open('f', 'w').close()",
      "print(libc.chmod(b'f', 0o4755), ctypes.get_errno())",
    ].join("\n");
    const run = await runInBox(box, `cd "$HOME" && python3 -c "${script}"`);
    assertEquals(run.code, 0, run.err);
    const [deathSignals, setuid] = run.out.trim().split("\n");
    assertEquals(deathSignals, "0 0");
    assertEquals(setuid, "-1 1", "chmod to a setuid mode answers EPERM still");
  });
});

Deno.test("a task's process cannot make a user namespace of its own (bubblewrap's --disable-userns)", async () => {
  await withSandboxBox(USER, async (box) => {
    const script = [
      "import ctypes",
      "libc = ctypes.CDLL(None, use_errno=True)",
      "made = libc.unshare(0x10000000)", // CLONE_NEWUSER
      "print('userns-made' if made == 0 else 'refused %d' % ctypes.get_errno())",
    ].join("\n");
    const run = await runInBox(
      box,
      `unshare --user --map-root-user true 2>/dev/null && echo unshare-made || echo unshare-refused
       python3 -c "${script}"
       grep '^NoNewPrivs:' /proc/self/status | tr -d ' \\t'`,
    );
    assertEquals(run.code, 0, run.err);
    const [unshare, python, noNewPrivs] = run.out.trim().split("\n");
    assertEquals(unshare, "unshare-refused", "unshare -U made a user namespace inside the task");
    assert(python.startsWith("refused"), `os.unshare(CLONE_NEWUSER) inside the task: ${python}`);
    assertEquals(noNewPrivs, "NoNewPrivs:1");
  });
});
