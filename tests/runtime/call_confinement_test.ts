/**
 * What keeps a call inside its own run, behind the attacks of tests/runtime/attack_review_test.ts:
 * the seccomp filter keeps a process's parent-death signal SIGKILL or none; a call whose pipes a
 * leftover process holds open returns all the same, and its cgroup is emptied; a folder above a
 * grant's path that someone other than root, the tool's uid or the path's owner could change
 * refuses the call, where a tool would otherwise run as whoever owns what was put at the path.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import {
  cgroupPlan,
  memoryCgroupRoot,
  PIDS_CGROUP_ROOT,
  RUN_ERRORS,
  RunError,
  runSandbox,
  runtimeCgroupRoot,
  SandboxRuntime,
  sweepCgroups,
} from "../../mod/runtime/mod.ts";
import {
  ownTree,
  processesWith,
  sandboxRuntime,
  settings,
  shellIn,
  specFor,
  TOOL_OWNER,
  withOwnedDir,
  withSandbox,
} from "./helpers.ts";

const asRoot = Deno.uid() === 0;
const hasPidsCgroup = asRoot && Deno.statSync("/sys/fs/cgroup/pids").isDirectory;

/** Another user of the box, neither the task nor the grant's owner. */
const BOB = { uid: 61241, gid: 61241 } as const;

Deno.test({
  name:
    "a tool's process may set its parent-death signal to SIGKILL, and to nothing else: clearing it or choosing another signal answers EPERM",
  ignore: !asRoot,
  fn: async () => {
    const rt = await sandboxRuntime();
    try {
      await withOwnedDir(async (dir) => {
        const ran = await rt.run(shellIn(
          `python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for sig in (0, 15, 10, 9):
    r = libc.prctl(1, sig, 0, 0, 0)
    print(sig, "ok" if r == 0 else os.strerror(ctypes.get_errno()))'`,
          [dir],
        ));
        assertStringIncludes(
          ran.content,
          "0 Operation not permitted\n15 Operation not permitted\n10 Operation not permitted\n9 ok\n",
        );
      });
    } finally {
      await rt.close();
    }
  },
});

/**
 * Runs runSandbox with a stand-in for bubblewrap that leaves a process holding its output open
 * and exits at once: the one thing the sandbox's pid namespace would never let happen.
 */
async function withLeftover(
  cgroup: boolean,
  check: (end: { status: number; output: string }, marker: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-leftover-" });
  const marker = `gurt-leftover-${crypto.randomUUID()}`;
  const root = cgroup ? runtimeCgroupRoot() : null;
  try {
    await Deno.chmod(dir, 0o755);
    const fake = `${dir}/bwrap`;
    await Deno.writeTextFile(fake, `#!/bin/sh\nsh -c 'sleep 30; : ${marker}' &\necho started\n`, {
      mode: 0o755,
    });
    const filter = `${dir}/filter`;
    await Deno.writeFile(filter, new Uint8Array(8), { mode: 0o600 });
    const end = await runSandbox([], {
      bwrap: fake,
      stdin: null,
      limits: { timeoutMs: 20_000, memoryBytes: 512 * 1024 * 1024, maxOutputBytes: 65536 },
      cgroup: root === null ? null : cgroupPlan(16, { slot: 0, root }),
      filter,
      mounts: [],
    });
    assert(end.kind === "exited", end.kind);
    await check({ status: end.status, output: new TextDecoder().decode(end.output) }, marker);
  } finally {
    for (const pid of await processesWith(marker)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    if (root !== null) {
      await sweepCgroups(PIDS_CGROUP_ROOT, root);
      const memory = memoryCgroupRoot(root)!;
      await sweepCgroups(memory.slice(0, memory.lastIndexOf("/")), memory);
    }
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name:
    "a call returns once bubblewrap has gone even while a leftover process holds its output open, with what was written before; in its cgroup, that process is killed",
  ignore: !hasPidsCgroup,
  fn: async () => {
    await withLeftover(true, async (end, marker) => {
      assertEquals(end, { status: 0, output: "started\n" });
      assertEquals(await processesWith(marker), [], "the leftover process still runs");
    });
    // Without a cgroup the call still returns (the leftover is the test's to kill).
    await withLeftover(false, async (end, marker) => {
      assertEquals(end, { status: 0, output: "started\n" });
      assert((await processesWith(marker)).length > 0, "the stand-in left nothing behind");
    });
  },
});

async function chown(path: string, who: { uid: number; gid: number }): Promise<void> {
  await Deno.chown(path, who.uid, who.gid);
}

Deno.test({
  name:
    "a call is refused with its own sentence when a folder above its grant's path is another user's, a link, or open to others' writes; root's folders, a sticky /tmp and the path owner's own are fine",
  ignore: !asRoot,
  fn: async () => {
    await withSandbox({}, async (rt, dir) => {
      // bob's folder (0755) holding alice's project: bob could swap the project for anything.
      await Deno.mkdir(`${dir}/bobs/proj`, { recursive: true });
      await Deno.mkdir(`${dir}/open/proj`, { recursive: true });
      await Deno.mkdir(`${dir}/real/proj`, { recursive: true });
      await ownTree(dir);
      await chown(`${dir}/bobs`, BOB);
      await Deno.chmod(`${dir}/bobs`, 0o755);
      // A folder of alice's that her group may write (not sticky).
      await Deno.chmod(`${dir}/open`, 0o775);
      await Deno.symlink(`${dir}/real`, `${dir}/alias`);
      for (const path of [`${dir}/bobs/proj`, `${dir}/open/proj`, `${dir}/alias/proj`]) {
        const error = await assertRejects(
          () => rt.run(shellIn("echo planted > planted.txt", [path])),
          RunError,
        );
        assertEquals(error.message, RUN_ERRORS.openParent, path);
        await assertRejects(() => Deno.lstat(`${path}/planted.txt`), Deno.errors.NotFound);
      }
      // Sticky and open to all (alice's own /tmp-like folder) is fine, as /tmp is.
      await Deno.chmod(`${dir}/open`, 0o1777);
      const ran = await rt.run(shellIn("echo ok > ok.txt && id -u", [`${dir}/open/proj`]));
      assertStringIncludes(ran.content, `${TOOL_OWNER.uid}\n`);
      // Under alice's folder, a folder of bob's is one alice could have put there: refused.
      await Deno.mkdir(`${dir}/bobs/pub`);
      await Deno.writeTextFile(`${dir}/bobs/pub/notes.txt`, "bob's public notes");
      await chown(`${dir}/bobs/pub`, BOB);
      await chown(`${dir}/bobs/pub/notes.txt`, BOB);
      const readPub = specFor({ tool: "read_file", paths: [`${dir}/bobs/pub`] }, "read_file", {
        path: `${dir}/bobs/pub/notes.txt`,
      });
      const refused = await assertRejects(() => rt.run(readPub), RunError);
      assertEquals(refused.message, RUN_ERRORS.openParent);
      // Moved under a folder of root's, the same folder of bob's is read as bob.
      const rootDir = await Deno.makeTempDir({ prefix: "gurt-root-" });
      try {
        await Deno.chmod(rootDir, 0o755);
        await Deno.rename(`${dir}/bobs`, `${rootDir}/bobs`);
        const read = await rt.run(
          specFor({ tool: "read_file", paths: [`${rootDir}/bobs/pub`] }, "read_file", {
            path: `${rootDir}/bobs/pub/notes.txt`,
          }),
        );
        assertEquals(read.content, "bob's public notes");
        await Deno.rename(`${rootDir}/bobs`, `${dir}/bobs`);
      } finally {
        await Deno.remove(rootDir, { recursive: true });
      }
      // A folder root owns, read under bob's folder, runs as nobody: nobody gains no one anything.
      await Deno.mkdir(`${dir}/bobs/rootdocs`);
      await Deno.writeTextFile(`${dir}/bobs/rootdocs/a.txt`, "root's doc");
      const asNobody = await rt.run(
        specFor({ tool: "read_file", paths: [`${dir}/bobs/rootdocs`] }, "read_file", {
          path: `${dir}/bobs/rootdocs/a.txt`,
        }),
      );
      assertEquals(asNobody.content, "root's doc");
    });
  },
});

Deno.test({
  name:
    "a grant path that does not exist, and a shell cwd that does not, each answer their own sentence (not a link's); an open parent is named in gurt serve's log",
  ignore: !asRoot,
  fn: async () => {
    const logged: string[] = [];
    const started = await SandboxRuntime.start(settings({ timeout_ms: 20_000 }), {
      log: (line) => logged.push(line),
    });
    const rt = started.runtime as SandboxRuntime;
    try {
      await withOwnedDir(async (dir) => {
        const missing = `${dir}/note`; // the grant says note, the folder is notes
        await Deno.mkdir(`${dir}/notes`);
        await ownTree(dir);
        for (
          const spec of [
            specFor({ tool: "read_file", paths: [missing] }, "read_file", {
              path: `${missing}/a.txt`,
            }),
            shellIn("true", [missing]),
          ]
        ) {
          const error = await assertRejects(() => rt.run(spec), RunError);
          assertEquals(error.message, RUN_ERRORS.missingPath);
        }
        const cwd = specFor({ tool: "shell", paths: [`${dir}/notes`] }, "shell", {
          command: "true",
          cwd: `${dir}/notes/sub`,
        });
        const error = await assertRejects(() => rt.run(cwd), RunError);
        assertEquals(error.message, RUN_ERRORS.missingCwd);
        // A folder of alice's open to her group's writes: refused, and the log names it.
        await Deno.mkdir(`${dir}/open/proj`, { recursive: true });
        await ownTree(`${dir}/open`);
        await Deno.chmod(`${dir}/open`, 0o775);
        await assertRejects(() => rt.run(shellIn("true", [`${dir}/open/proj`])), RunError);
        assert(
          logged.some((line) => line.includes(`the folder "${dir}/open" above its grant's path`)),
          logged.join("\n"),
        );
      });
    } finally {
      await rt.close();
    }
  },
});
