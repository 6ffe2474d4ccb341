/**
 * An attacker's review of the built-in tools' uid (issue 17, after 43bcdf4 and 376efde): each test
 * is an attack a task can make with its own grants and parallel calls, run for real as root, that
 * worked on 376efde. A task's tools run as the grant path's owner (TOOL_OWNER, "alice"); "bob" is
 * another user of the box whose files neither the task nor alice may read.
 *
 * - A read mount's owner is read by the wrapper's first stage, as root and through any link in the
 *   path's folders, and never checked again: a shell call that swaps a folder above the grant's
 *   path with a link while read_file calls run makes read_file run as bob.
 * - A tool runs as whoever owns the object at the grant's path when the call runs: a task that may
 *   rename in the folder above it (a shell grant there) puts bob's folder at the path and reads
 *   and writes it as bob.
 * - A tool's process that clears its parent-death signal outlives its call and its time limit, and
 *   the call does not return while it holds the output open.
 * - A shell call's command is in the argv of host processes, which every user (another task's
 *   worker) reads in /proc.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { RUN_ERRORS, RunError } from "../../mod/runtime/mod.ts";
import {
  chownTree,
  ownTree,
  processesWith,
  sandboxRuntime,
  shellIn,
  specFor,
  withOwnedDir,
  withSandbox,
} from "./helpers.ts";

const asRoot = Deno.uid() === 0;

/** Another user of the box: not the grant's owner, not the task. */
const BOB = { uid: 61240, gid: 61240 } as const;
/** A user standing for another task's worker. */
const OTHER_TASK = { uid: 61299, gid: 61299 } as const;

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

Deno.test({
  name:
    "a read_file call never runs as the owner of a folder a link led the wrapper to: swapping a folder above the grant's path with a link, from a parallel shell call, reads nothing of bob's",
  ignore: !asRoot,
  fn: async () => {
    const rt = await sandboxRuntime();
    // bob's folder named like the grant's, somewhere the task cannot even list (root's, 0700).
    const elsewhere = await Deno.makeTempDir({ prefix: "gurt-attack-bob-" });
    try {
      await Deno.mkdir(`${elsewhere}/docs`);
      await Deno.chown(`${elsewhere}/docs`, BOB.uid, BOB.gid);
      await withOwnedDir(async (dir) => {
        // alice's folder, granted to read_file; in it a file of bob's, 0600.
        await Deno.mkdir(`${dir}/proj/docs`, { recursive: true });
        await Deno.chmod(`${dir}/proj/docs`, 0o755);
        await ownTree(dir);
        await Deno.writeTextFile(`${dir}/proj/docs/bob.txt`, "BOB-SECRET", { mode: 0o600 });
        await Deno.chown(`${dir}/proj/docs/bob.txt`, BOB.uid, BOB.gid);
        const read = specFor({ tool: "read_file", paths: [`${dir}/proj/docs`] }, "read_file", {
          path: `${dir}/proj/docs/bob.txt`,
        });
        // The race, run by the task through its shell grant on alice's folder: exchange proj with
        // a link to bob's side, again and again (renameat2 RENAME_EXCHANGE).
        const racer = rt.run(shellIn(
          `python3 -c 'import ctypes, os, time
os.symlink("${elsewhere}", "flip")
libc = ctypes.CDLL(None)
end = time.time() + 15
while time.time() < end and not os.path.exists("stop"):
    for i in range(100):
        libc.syscall(316, -100, b"proj", -100, b"flip", 2)'`,
          [dir],
        ));
        // Until the racer runs (it makes flip), then 30 reads, however long they take here.
        while (!await Deno.lstat(`${dir}/flip`).then(() => true, () => false)) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const seen: Record<string, number> = {};
        let attempts = 0;
        while (attempts < 30) {
          attempts++;
          const got = await rt.run(read).then((out) => out.content, (error) => String(error));
          seen[got.slice(0, 60)] = (seen[got.slice(0, 60)] ?? 0) + 1;
        }
        await Deno.writeTextFile(`${dir}/stop`, "");
        await racer;
        assertEquals(seen["BOB-SECRET"], undefined, JSON.stringify(seen));
      });
    } finally {
      await rt.close();
      await Deno.remove(elsewhere, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a task that may rename above a grant's path cannot make its tools run as another user: bob's folder moved to the path is neither read nor written as bob",
  ignore: !asRoot,
  fn: async () => {
    await withSandbox({}, async (rt, dir) => {
      await Deno.mkdir(`${dir}/shared`);
      await Deno.mkdir(`${dir}/bob`);
      await ownTree(dir);
      await Deno.writeTextFile(`${dir}/bob/secret.txt`, "BOB-SECRET", { mode: 0o600 });
      await chownTree(`${dir}/bob`, BOB);
      await Deno.chmod(`${dir}/bob`, 0o700);
      // The grants, as the owner wrote them: a shell on alice's folder, read and write on its
      // shared sub-folder (alice's too). The calls are decided before the move.
      const read = specFor({ tool: "read_file", paths: [`${dir}/shared`] }, "read_file", {
        path: `${dir}/shared/secret.txt`,
      });
      const write = specFor({ tool: "write_file", paths: [`${dir}/shared`] }, "write_file", {
        path: `${dir}/shared/planted.txt`,
        content: "planted",
      });
      const before = await rt.run(shellIn("cat bob/secret.txt", [dir]));
      assert(!before.content.includes("BOB-SECRET"), before.content);
      const moved = await rt.run(
        shellIn("mv shared shared.old && mv bob shared && echo moved", [dir]),
      );
      assert(moved.content.includes("moved"), moved.content);
      const got = await rt.run(read).then((out) => out.content, (error) => String(error));
      assert(!got.includes("BOB-SECRET"), `read_file read bob's file: ${got}`);
      // Both calls are refused with the open-parent sentence (runbook runtime-open-parent).
      for (const spec of [read, write]) {
        const error = await assertRejects(() => rt.run(spec), RunError);
        assertEquals(error.message, RUN_ERRORS.openParent);
      }
      const planted = await Deno.lstat(`${dir}/shared/planted.txt`).catch(() => null);
      assert(planted?.uid !== BOB.uid, "write_file wrote in bob's folder as bob");
      assertEquals(planted, null, "write_file wrote in bob's folder");
    });
  },
});

/** A python program that clears its parent-death signal, then beats into `beat` for 3 s. */
function orphan(marker: string, options: { keepOutput: boolean }): string {
  const quiet = options.keepOutput
    ? ""
    : 'fd = os.open("/dev/null", os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)\n';
  return `exec python3 -c 'import ctypes, os, time
ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)
${quiet}for i in range(30):
    open("beat", "w").write(str(i)); time.sleep(0.1)
# ${marker}'`;
}

Deno.test({
  name:
    "a tool's process that clears its parent-death signal is still stopped at the time limit: nothing of the call runs, or writes in the grant's folder, once the call has returned",
  ignore: !asRoot,
  fn: async () => {
    const marker = `gurt-orphan-${crypto.randomUUID()}`;
    await withSandbox({ timeout_ms: 1000 }, async (rt, dir) => {
      await assertRejects(
        () => rt.run(shellIn(orphan(marker, { keepOutput: false }), [dir])),
        RunError,
        RUN_ERRORS.timedOut,
      );
      const deadline = Date.now() + 500;
      let left = await processesWith(marker);
      while (left.length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        left = await processesWith(marker);
      }
      const beat = await Deno.readTextFile(`${dir}/beat`).catch(() => "");
      await new Promise((resolve) => setTimeout(resolve, 300));
      const later = await Deno.readTextFile(`${dir}/beat`).catch(() => "");
      assertEquals(left, [], "a process of the call outlived it");
      assertEquals(later, beat, "the grant's folder was still written after the call returned");
    }, async () => killAll(await processesWith(marker)));
  },
});

Deno.test({
  name:
    "a call ends at its time limit even while a process of it that cleared its parent-death signal holds the output open",
  ignore: !asRoot,
  fn: async () => {
    const marker = `gurt-orphan-${crypto.randomUUID()}`;
    await withSandbox({ timeout_ms: 1000 }, async (rt, dir) => {
      const started = Date.now();
      await assertRejects(
        () => rt.run(shellIn(orphan(marker, { keepOutput: true }), [dir])),
        RunError,
        RUN_ERRORS.timedOut,
      );
      const took = Date.now() - started;
      assert(took < 2500, `the call with a 1000 ms limit returned after ${took} ms`);
    }, async () => killAll(await processesWith(marker)));
  },
});

Deno.test({
  name:
    "a shell call's command cannot be read by another user (another task's worker) from the host's processes while it runs",
  ignore: !asRoot,
  fn: async () => {
    const rt = await sandboxRuntime();
    const marker = `gurt-private-${crypto.randomUUID()}`;
    try {
      await withOwnedDir(async (dir) => {
        const running = rt.run(shellIn(`touch started; sleep 1.5; : ${marker}`, [dir]));
        const deadline = Date.now() + 5000;
        while (Date.now() < deadline) {
          if (await Deno.lstat(`${dir}/started`).then(() => true, () => false)) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const readable: string[] = [];
        for (const pid of await processesWith(marker)) {
          // Read as another user, whose own argv does not hold the marker.
          const out = await new Deno.Command("/usr/bin/setpriv", {
            args: [
              `--reuid=${OTHER_TASK.uid}`,
              `--regid=${OTHER_TASK.gid}`,
              "--clear-groups",
              "--",
              "cat",
              `/proc/${pid}/cmdline`,
            ],
            stdout: "piped",
            stderr: "null",
          }).output();
          const text = new TextDecoder().decode(out.stdout);
          if (text.includes(marker)) readable.push(`${pid}: ${text.replaceAll("\0", " ")}`);
        }
        await running;
        assertEquals(readable, [], "another user read the command");
      });
    } finally {
      await rt.close();
    }
  },
});
