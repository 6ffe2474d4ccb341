/**
 * The sandbox runtime with the real bubblewrap (docs/threat-model.md#the-built-in-tools): what each
 * tool can reach, the limits, and that no process of a call outlives it.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import {
  RUN_ERRORS,
  RunError,
  type RuntimeSettings,
  SandboxRuntime,
  sweepCgroups,
} from "../../mod/runtime/mod.ts";
import { ownTree, settings, specFor, withOwnedDir } from "./helpers.ts";

async function runtimeWith(
  extra: Partial<RuntimeSettings> = {},
  cgroupRoot?: string,
): Promise<SandboxRuntime> {
  const started = await SandboxRuntime.start(settings(extra), {
    log: () => {},
    ...(cgroupRoot === undefined ? {} : { cgroupRoot }),
  });
  assert(started.runtime instanceof SandboxRuntime, `no sandbox: ${started.notices.join(" ")}`);
  return started.runtime;
}

const withDir = withOwnedDir;

/** The processes whose command line holds `marker`. */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (cmdline.split("\0").includes(marker)) found.push(Number(entry.name));
  }
  return found;
}

const shell = (command: string, extra: { paths?: string[]; cwd?: string } = {}) =>
  specFor(
    { tool: "shell", ...(extra.paths ? { paths: extra.paths } : {}) },
    "shell",
    { command, ...(extra.cwd ? { cwd: extra.cwd } : {}) },
  );

Deno.test("read_file returns the file under its grant, cut at the output cap, and a missing file is a fixed sentence", async () => {
  const runtime = await runtimeWith();
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/a.md`, "notes\n");
    const read = await runtime.run(
      specFor({ tool: "read_file", paths: [dir] }, "read_file", { path: `${dir}/a.md` }),
    );
    assertEquals(read, { content: "notes\n", truncated: false });
    await Deno.writeTextFile(`${dir}/big.log`, "z".repeat(300_000));
    const big = await (await runtimeWith({ max_output_bytes: 1000 })).run(
      specFor({ tool: "read_file", paths: [dir] }, "read_file", { path: `${dir}/big.log` }),
    );
    assertEquals(big, { content: "z".repeat(1000), truncated: true });
    const missing = runtime.run(
      specFor({ tool: "read_file", paths: [dir] }, "read_file", { path: `${dir}/none.md` }),
    );
    await assertRejects(() => missing, RunError, RUN_ERRORS.readFailed);
  });
});

Deno.test("a symlink in the granted directory to a secret file outside it reads nothing", async () => {
  const runtime = await runtimeWith();
  await withDir(async (outer) => {
    await Deno.mkdir(`${outer}/granted`);
    await Deno.mkdir(`${outer}/ssh`);
    await Deno.writeTextFile(`${outer}/ssh/id_ed25519`, "SECRET-KEY-MATERIAL");
    await Deno.symlink(`${outer}/ssh/id_ed25519`, `${outer}/granted/key`);
    await Deno.symlink(`${outer}/ssh`, `${outer}/granted/ssh-dir`);
    await ownTree(`${outer}/granted`);
    const grant = { tool: "read_file", paths: [`${outer}/granted`] };
    for (const path of [`${outer}/granted/key`, `${outer}/granted/ssh-dir/id_ed25519`]) {
      const error = await assertRejects(
        () => runtime.run(specFor(grant, "read_file", { path })),
        RunError,
      );
      assertEquals(error.message, RUN_ERRORS.readFailed);
    }
    // The same shell grant sees the link but not what it points at.
    const listed = await runtime.run(
      shell(`cat key; ls ${outer}/ssh`, { paths: [`${outer}/granted`], cwd: `${outer}/granted` }),
    );
    assert(!listed.content.includes("SECRET"), listed.content);
  });
});

Deno.test("write_file writes inside its mount and cannot write outside it", async () => {
  const runtime = await runtimeWith();
  await withDir(async (outer) => {
    await Deno.mkdir(`${outer}/out`);
    await ownTree(`${outer}/out`);
    const grant = { tool: "write_file", paths: [`${outer}/out`] };
    const wrote = await runtime.run(
      specFor(grant, "write_file", { path: `${outer}/out/a.txt`, content: "héllo" }),
    );
    assertEquals(wrote.content, `wrote 6 bytes to ${outer}/out/a.txt`);
    assertEquals(await Deno.readTextFile(`${outer}/out/a.txt`), "héllo");
    // A symlink inside the mount pointing outside it: the write lands nowhere on the host.
    await Deno.symlink(`${outer}/victim.txt`, `${outer}/out/escape`);
    await runtime.run(specFor(grant, "write_file", { path: `${outer}/out/escape`, content: "x" }))
      .catch((error) => assert(error instanceof RunError));
    await assertRejects(() => Deno.stat(`${outer}/victim.txt`), Deno.errors.NotFound);
    // A shell under the same directory cannot write beside it either.
    const tried = await runtime.run(
      shell(`echo x > ${outer}/beside.txt; echo x > /usr/gurt-test`, {
        paths: [`${outer}/out`],
        cwd: `${outer}/out`,
      }),
    );
    assertStringIncludes(tried.content, "[exit status 2]");
    await assertRejects(() => Deno.stat(`${outer}/beside.txt`), Deno.errors.NotFound);
    await assertRejects(() => Deno.stat("/usr/gurt-test"), Deno.errors.NotFound);
  });
});

Deno.test("a grant over the box home, a folder holding it, or a symlink to it is never mounted", async () => {
  await withDir(async (outer) => {
    const home = `${outer}/box/home`;
    await Deno.mkdir(`${home}/grants`, { recursive: true });
    await Deno.writeTextFile(`${home}/grants/g.toml`, "secret grant");
    await Deno.mkdir(`${outer}/work`);
    await Deno.writeTextFile(`${outer}/work/a.txt`, "work");
    await Deno.symlink(`${outer}/box`, `${outer}/alias`);
    const started = await SandboxRuntime.start(settings(), {
      log: () => {},
      protectedPaths: [home, `${outer}/vault/vault.env`],
    });
    const runtime = started.runtime;
    const read = (grant: string, path: string) =>
      runtime.run(specFor({ tool: "read_file", paths: [grant] }, "read_file", { path }));
    for (
      const [grant, path] of [
        [home, `${home}/grants/g.toml`],
        [`${outer}/box`, `${home}/grants/g.toml`],
        [`${outer}/alias`, `${outer}/alias/home/grants/g.toml`],
        [`${outer}/vault`, `${outer}/vault/vault.env`],
      ]
    ) {
      await assertRejects(() => read(grant, path), RunError, RUN_ERRORS.protectedPath);
    }
    const shellOver = runtime.run(shell("ls", { paths: [outer], cwd: outer }));
    await assertRejects(() => shellOver, RunError, RUN_ERRORS.protectedPath);
    assertEquals((await read(`${outer}/work`, `${outer}/work/a.txt`)).content, "work");
  });
});

Deno.test("a shell that exits non-zero is a result with its output and status, stderr included", async () => {
  const runtime = await runtimeWith();
  const ran = await runtime.run(shell("echo out; echo err >&2; exit 3"));
  assertEquals(ran, { content: "out\nerr\n\n[exit status 3]", truncated: false });
});

Deno.test("a shell sees none of the core's environment and none of the host's files", async () => {
  Deno.env.set("GURT_TEST_CORE_ONLY", "core-value");
  const runtime = await runtimeWith();
  const ran = await runtime.run(shell("env; ls /root /home /var /etc/shadow 2>&1; id -u"));
  assert(!ran.content.includes("core-value"), ran.content);
  assertStringIncludes(ran.content, "HOME=/tmp");
  assertStringIncludes(ran.content, "ls: cannot access '/root'");
  assertStringIncludes(ran.content, "ls: cannot access '/etc/shadow'");
});

Deno.test("a shell with no network reaches neither another host nor the box's loopback services", async () => {
  const runtime = await runtimeWith();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      accepted++;
      conn.close();
    }
  })();
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    const ran = await runtime.run(shell(
      `curl -sS --max-time 3 http://127.0.0.1:${port}/; echo "loopback $?"; ` +
        `curl -sS --max-time 3 https://1.1.1.1/; echo "remote $?"; ` +
        `curl -sS --max-time 3 https://deb.debian.org/; echo "named $?"; cat /proc/net/dev`,
    ));
    assertStringIncludes(ran.content, "loopback 7");
    assertStringIncludes(ran.content, "remote 7");
    assertStringIncludes(ran.content, "named 6");
    assert(!/\beth\d|\bens\d|\bveth/.test(ran.content), ran.content);
    assertEquals(accepted, 0);
    // The same curl from the box itself does reach the listener: the test can fail.
    const direct = await new Deno.Command("curl", {
      args: ["-sS", "--max-time", "3", `http://127.0.0.1:${port}/`],
      stderr: "null",
      stdout: "null",
    }).output();
    assert(direct.code !== 7);
    assertEquals(accepted, 1);
  } finally {
    listener.close();
    await accepting.catch(() => {});
  }
});

Deno.test("the time limit kills the whole sandbox, background processes included", async () => {
  const runtime = await runtimeWith({ timeout_ms: 300 });
  const started = performance.now();
  await assertRejects(
    () => runtime.run(shell("sleep 97531 & sleep 97531; echo never")),
    RunError,
    RUN_ERRORS.timedOut,
  );
  assert(performance.now() - started < 5000);
  assertEquals(await processesWith("97531"), []);
});

Deno.test("no process of a call is left after it, even one it started in the background", async () => {
  const runtime = await runtimeWith();
  const ran = await runtime.run(shell("(setsid sleep 86420 &) ; sleep 86420 & echo started"));
  assertStringIncludes(ran.content, "started");
  assertEquals(await processesWith("86420"), []);
});

Deno.test("the memory limit holds: an allocation past it fails, one under it succeeds", async () => {
  const runtime = await runtimeWith({ memory_bytes: 64 * 1024 * 1024 });
  const allocate = (mb: number) =>
    shell(`x=$(head -c ${mb}000000 /dev/zero | tr '\\0' a); echo "got \${#x}"`);
  const small = await runtime.run(allocate(8));
  assertStringIncludes(small.content, "got 8000000");
  const big = await runtime.run(allocate(200));
  assert(!big.content.includes("got 200000000"), big.content);
  assert(!big.content.endsWith("[exit status 0]"), big.content);
});

const capped = (await runtimeWith()).capsProcesses;

Deno.test({
  name: "the process limit holds: forks past max_processes fail inside the sandbox",
  ignore: !capped,
  fn: async () => {
    const spawn = "i=0; while [ $i -lt 30 ]; do sleep 5 & i=$((i+1)); echo spawned $i; done";
    const spawned = (content: string) =>
      Math.max(0, ...[...content.matchAll(/spawned (\d+)/g)].map((m) => Number(m[1])));
    const few = await (await runtimeWith({ max_processes: 8 })).run(shell(spawn));
    assertStringIncludes(few.content, "Cannot fork");
    assert(spawned(few.content) < 8, few.content);
    const roomy = await (await runtimeWith({ max_processes: 64 })).run(shell(spawn));
    assertEquals(spawned(roomy.content), 30, roomy.content);
  },
});

Deno.test({
  name: "calls running together get separate pids cgroups, each empty once its call returns",
  ignore: !capped,
  fn: async () => {
    const root = `/sys/fs/cgroup/pids/gurt-test-${crypto.randomUUID()}`;
    try {
      const runtime = await runtimeWith({ max_processes: 16 }, root);
      const which = shell("sleep 0.2; grep pids /proc/self/cgroup");
      const [a, b] = await Promise.all([runtime.run(which), runtime.run(which)]);
      const groups = [a, b].map((ran) => /pids:(\S+)/.exec(ran.content)?.[1]);
      assertEquals(new Set(groups).size, 2, `${a.content} ${b.content}`);
      for (const group of groups) {
        const dir = `/sys/fs/cgroup/pids${group}`;
        assert(dir.startsWith(`${root}/call-`), dir);
        assertEquals(await Deno.readTextFile(`${dir}/pids.max`), "16\n");
        assertEquals(await Deno.readTextFile(`${dir}/cgroup.procs`), "");
      }
      const again = await runtime.run(which);
      assertStringIncludes(again.content, groups[0]!);
    } finally {
      for (const entry of Deno.readDirSync(root)) {
        if (entry.isDirectory) await Deno.remove(`${root}/${entry.name}`);
      }
      await Deno.remove(root);
    }
  },
});

Deno.test({
  name:
    "a start sweeps the cgroup folders of runtimes whose process has gone, and close removes its own",
  ignore: !capped,
  fn: async () => {
    const root = `/sys/fs/cgroup/pids/gurt-test-${crypto.randomUUID()}`;
    const gone = `${root}/999999999-1`;
    const alive = `${root}/${Deno.pid}-77`;
    try {
      for (const dir of [gone, alive]) await Deno.mkdir(`${dir}/call-0`, { recursive: true });
      await sweepCgroups(root);
      await assertRejects(() => Deno.stat(gone), Deno.errors.NotFound);
      assert((await Deno.stat(`${alive}/call-0`)).isDirectory);
      const runtime = await runtimeWith({}, alive);
      await runtime.run(shell("true"));
      await runtime.close();
      await assertRejects(() => Deno.stat(alive), Deno.errors.NotFound);
    } finally {
      await new Deno.Command("/bin/sh", {
        args: ["-c", 'rmdir "$1"/*/* "$1"/* "$1" 2>/dev/null; exit 0', "x", root],
      }).output();
    }
  },
});

Deno.test("output past its cap is cut, flagged truncated, and the command is stopped", async () => {
  const runtime = await runtimeWith({ max_output_bytes: 1000, timeout_ms: 20_000 });
  const started = performance.now();
  const ran = await runtime.run(shell("yes"));
  assertEquals(ran.truncated, true);
  assert(ran.content.startsWith("y\n".repeat(500)));
  assertStringIncludes(ran.content, "[output cut at 1000 bytes; the command was stopped]");
  assert(performance.now() - started < 10_000);
  const read = await runtime.run(shell("head -c 999 /dev/zero | tr '\\0' a"));
  assertEquals(read.truncated, false);
});

Deno.test("a bubblewrap that cannot run leaves the refusing runtime, pointing at the runbook", async () => {
  const started = await SandboxRuntime.start(settings(), { bwrap: "/nonexistent/bwrap" });
  assert(!(started.runtime instanceof SandboxRuntime));
  assertStringIncludes(started.notices.join("\n"), "see runbook.md#runtime-unavailable");
  await assertRejects(
    () => started.runtime.run(shell("true")),
    RunError,
    "see runbook.md#runtime-unavailable",
  );
});

Deno.test("a grant's path that a task turned into a link (to a folder outside, absolute or relative) is never mounted: the call is refused and nothing outside is read or written", async () => {
  const runtime = await runtimeWith();
  await withDir(async (outer) => {
    const proj = `${outer}/proj`;
    await Deno.mkdir(`${proj}/docs`, { recursive: true });
    await Deno.mkdir(`${outer}/outside`);
    await Deno.writeTextFile(`${outer}/outside/secret.txt`, "OUTSIDE-SECRET\n");
    await ownTree(outer);
    const readDocs = { tool: "read_file", paths: [`${proj}/docs`] };
    const writeDocs = { tool: "write_file", paths: [`${proj}/docs`] };
    // The task's shell, under a grant on the project, puts a link where docs was.
    for (const target of [`${outer}/outside`, "../outside"]) {
      const swapped = await runtime.run(
        shell(`rm -rf docs && ln -sfn ${target} docs && echo swapped`, {
          paths: [proj],
          cwd: proj,
        }),
      );
      assertStringIncludes(swapped.content, "swapped");
      for (
        const spec of [
          specFor(readDocs, "read_file", { path: `${proj}/docs/secret.txt` }),
          specFor(writeDocs, "write_file", { path: `${proj}/docs/planted.txt`, content: "x" }),
          shell("cat secret.txt", { paths: [`${proj}/docs`], cwd: `${proj}/docs` }),
        ]
      ) {
        const error = await assertRejects(() => runtime.run(spec), RunError);
        assertEquals(error.message, RUN_ERRORS.linkedPath);
      }
      await assertRejects(() => Deno.stat(`${outer}/outside/planted.txt`), Deno.errors.NotFound);
    }
    // Put back as a folder, the grant works again.
    await Deno.remove(`${proj}/docs`);
    await Deno.mkdir(`${proj}/docs`);
    await Deno.writeTextFile(`${proj}/docs/a.md`, "notes\n");
    const read = await runtime.run(
      specFor(readDocs, "read_file", { path: `${proj}/docs/a.md` }),
    );
    assertEquals(read.content, "notes\n");
  });
});

Deno.test("a call's /dev is read-only and its /dev/shm holds no more than its /tmp", async () => {
  const runtime = await runtimeWith({ memory_bytes: 64 * 1024 * 1024 });
  const ran = await runtime.run(shell(
    "echo x > /dev/planted 2>/dev/null && echo dev-written; " +
      "dd if=/dev/zero of=/dev/shm/x bs=1M count=200 2>/dev/null; " +
      "echo shm $(($(stat -c %s /dev/shm/x) / 1048576)) MiB; echo into-null > /dev/null && echo null-ok",
  ));
  assert(!ran.content.includes("dev-written"), ran.content);
  assertStringIncludes(ran.content, "shm 64 MiB");
  assertStringIncludes(ran.content, "null-ok");
});

Deno.test("a link flipped back and forth under a grant's path while calls run never gets the vault's folder mounted", async () => {
  await withDir(async (outer) => {
    const proj = `${outer}/proj`;
    const vaultDir = `${outer}/vault`;
    await Deno.mkdir(`${proj}/benign`, { recursive: true });
    await Deno.mkdir(vaultDir);
    await Deno.writeTextFile(`${proj}/benign/vault.env`, "BENIGN\n");
    await Deno.writeTextFile(`${vaultDir}/vault.env`, "API_TOKEN=VAULT-SECRET\n");
    await Deno.symlink(`${proj}/benign`, `${proj}/docs`);
    await ownTree(proj);
    const started = await SandboxRuntime.start(settings({ timeout_ms: 10_000 }), {
      log: () => {},
      protectedPaths: [`${outer}/home`, `${vaultDir}/vault.env`],
    });
    const runtime = started.runtime;
    // A task's shell flips docs between a harmless folder and the vault's, for three seconds.
    const flipping = runtime.run(shell(
      `end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do ` +
        `ln -sfn ${proj}/benign d1; mv -T d1 docs; ln -sfn ${vaultDir} d2; mv -T d2 docs; done`,
      { paths: [proj], cwd: proj },
    ));
    const seen = new Map<string, number>();
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline) {
      const answer = await runtime.run(
        specFor({ tool: "read_file", paths: [`${proj}/docs`] }, "read_file", {
          path: `${proj}/docs/vault.env`,
        }),
      ).then((read) => read.content, (error) => error.message);
      seen.set(answer, (seen.get(answer) ?? 0) + 1);
    }
    await flipping;
    for (const answer of seen.keys()) {
      assert(
        [RUN_ERRORS.linkedPath, RUN_ERRORS.protectedPath, RUN_ERRORS.readFailed].includes(
          answer as never,
        ),
        `a call answered ${JSON.stringify(answer)}: ${JSON.stringify([...seen])}`,
      );
    }
  });
});

Deno.test("a grant's path that a task made a FIFO, or a link to a name ending in a newline, is refused at once; a real folder whose name ends in one is mounted", async () => {
  const runtime = await runtimeWith({ timeout_ms: 20_000 });
  await withDir(async (outer) => {
    const proj = `${outer}/proj`;
    await Deno.mkdir(proj);
    await ownTree(proj);
    const read = (grantPath: string, path: string) =>
      runtime.run(specFor({ tool: "read_file", paths: [grantPath] }, "read_file", { path }));
    // A FIFO where a folder was: no open that waits for a writer (the time limit is 20 s).
    await runtime.run(shell("mkfifo docs", { paths: [proj], cwd: proj }));
    const started = Date.now();
    const fifo = await assertRejects(() => read(`${proj}/docs`, `${proj}/docs/a`), RunError);
    assertEquals(fifo.message, RUN_ERRORS.linkedPath);
    assert(Date.now() - started < 5000, `${Date.now() - started} ms`);
    // docs made a link to "docs\n": the path with its newline is another object.
    await runtime.run(shell(
      'rm docs; mkdir "docs\n"; echo NOT-THE-GRANT > "docs\n/a"; ln -s "docs\n" docs',
      { paths: [proj], cwd: proj },
    ));
    const linked = await assertRejects(() => read(`${proj}/docs`, `${proj}/docs/a`), RunError);
    assertEquals(linked.message, RUN_ERRORS.linkedPath);
    // The folder whose name ends in a newline, granted by that name, is itself mounted.
    assertEquals((await read(`${proj}/docs\n`, `${proj}/docs\n/a`)).content, "NOT-THE-GRANT\n");
  });
});

Deno.test("a grant with more paths than a call can mount is refused with its own sentence", async () => {
  const runtime = await runtimeWith();
  await withDir(async (outer) => {
    const paths = Array.from({ length: 7 }, (_, i) => `${outer}/p${i}`);
    for (const path of paths) await Deno.mkdir(path);
    await ownTree(outer);
    const error = await assertRejects(
      () => runtime.run(shell("true", { paths, cwd: paths[0] })),
      RunError,
    );
    assertEquals(error.message, RUN_ERRORS.tooManyPaths);
    const six = await runtime.run(
      shell("for d in ../p*; do echo x > $d/f; done; echo ok", {
        paths: paths.slice(1),
        cwd: paths[1],
      }),
    );
    assertStringIncludes(six.content, "ok");
    for (const path of paths.slice(1)) assertEquals(await Deno.readTextFile(`${path}/f`), "x\n");
  });
});
