/**
 * The built-in tools never run as root: each call runs as the unprivileged owner of its grant's
 * paths (nobody where root owns them all), with no capability and no_new_privs, under a seccomp
 * filter that keeps setuid and setgid bits off what it writes. The attacks of the outside review,
 * each of which gained root on b91de02: a setuid copy of `id` made through a shell grant and run
 * by the task's own user, a setgid one, file capabilities and a device node.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { RUN_ERRORS, RunError } from "../../mod/runtime/mod.ts";
import { requestJson } from "../../mod/net/mod.ts";
import { grant, withBox } from "../kit/mod.ts";
import {
  ownTree,
  sandboxRuntime,
  shellIn,
  specFor,
  TOOL_OWNER,
  withOwnedDir,
  withSandbox,
} from "./helpers.ts";

const asRoot = Deno.uid() === 0;

/** Runs `script` under `uid` and `gid` with no supplementary groups and, unlike a task, no no_new_privs. */
async function runAs(uid: number, gid: number, script: string): Promise<string> {
  const out = await new Deno.Command("setpriv", {
    args: [`--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--", "sh", "-c", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
}

/** Every file under `dir` (recursively) whose mode holds a setuid or setgid bit, or that is a device. */
async function dangerous(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    const info = await Deno.lstat(path);
    if ((info.mode! & 0o6000) !== 0 || info.isBlockDevice || info.isCharDevice) found.push(path);
    if (info.isDirectory) found.push(...await dangerous(path));
  }
  return found;
}

Deno.test({
  name:
    "the review's reproduction: a setuid copy of id made through a shell grant belongs to the folder's owner, has no setuid bit, and runs as whoever runs it",
  ignore: !asRoot,
  fn: async () => {
    await withSandbox({}, async (rt, dir) => {
      const ran = await rt.run(
        shellIn("cp /usr/bin/id ./myid && chmod 4755 ./myid && echo made", [dir]),
      );
      assert(!ran.content.includes("made"), ran.content);
      assertStringIncludes(ran.content, "Operation not permitted");
      const info = await Deno.lstat(`${dir}/myid`);
      assertEquals([info.uid, info.gid], [TOOL_OWNER.uid, TOOL_OWNER.gid]);
      assertEquals(info.mode! & 0o7777, 0o755);
      // Another user running it gains nothing: not root, not the owner.
      const who = await runAs(61240, 61240, `${dir}/myid`);
      assertEquals(who.trim(), "uid=61240 gid=61240 groups=61240");
    });
  },
});

Deno.test({
  name:
    "setgid, setuid by other calls (install, open with a mode, mknod of a file, a folder's g+s), file capabilities and device nodes all fail inside a tool",
  ignore: !asRoot,
  fn: async () => {
    await withSandbox({}, async (rt, dir) => {
      const attempts = [
        "cp /usr/bin/id ./g && chmod 2755 ./g",
        "chmod u+s,g+s ./g",
        "install -m 6755 /usr/bin/id ./inst",
        "mkdir d && chmod g+s d",
        `python3 -c 'import os; os.close(os.open("py", os.O_CREAT | os.O_WRONLY, 0o4755))'`,
        `python3 -c 'import os, stat; os.mknod("nod", stat.S_IFREG | 0o6755)'`,
        `python3 -c 'import os; os.chmod("g", 0o4755)'`,
        `python3 -c 'import os; fd = os.open("g", os.O_RDONLY); os.fchmod(fd, 0o2755)'`,
        "mknod ./null c 1 3",
        "mknod ./disk b 8 0",
        "/usr/sbin/setcap cap_setuid,cap_dac_override+ep ./g",
      ];
      const script = attempts.map((line) => `{ ${line}; } 2>/dev/null && echo "GAINED: ${line}"`)
        .join("\n");
      const ran = await rt.run(shellIn(`${script}\necho done`, [dir]));
      assert(!ran.content.includes("GAINED"), ran.content);
      assertStringIncludes(ran.content, "done");
      assertEquals(await dangerous(dir), []);
      // No file capability was set either.
      const caps = await new Deno.Command("/usr/sbin/getcap", {
        args: ["-r", dir],
        stdout: "piped",
        stderr: "null",
      }).output().catch(() => null);
      if (caps !== null) assertEquals(new TextDecoder().decode(caps.stdout).trim(), "");
      // The ordinary work still happens: a plain file, a mode, a FIFO, a folder.
      const plain = await rt.run(
        shellIn("echo hi > f && chmod 750 f && mkfifo p && mkdir -m 700 e && echo ok", [dir]),
      );
      assertStringIncludes(plain.content, "ok");
      assertEquals((await Deno.lstat(`${dir}/f`)).mode! & 0o7777, 0o750);
    });
  },
});

Deno.test({
  name:
    "every process of a call runs, as the host sees it, as the grant's owner with no capability and no_new_privs; bubblewrap itself too",
  ignore: !asRoot,
  fn: async () => {
    await withSandbox({}, async (rt, dir) => {
      const running = rt.run(shellIn("touch started; sleep 2", [dir]));
      // Once the shell has touched started, bubblewrap has set up and dropped what it had.
      const deadline = Date.now() + 10_000;
      while (!await Deno.lstat(`${dir}/started`).then(() => true, () => false)) {
        assert(Date.now() < deadline, "the call never started");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // bubblewrap (the folder is in its argv) and the shell it runs (in the folder), and the sleep
      // if it has started.
      const statuses: string[] = [];
      for (const entry of Deno.readDirSync("/proc")) {
        if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
        const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
        const cwd = await Deno.readLink(`/proc/${entry.name}/cwd`).catch(() => "");
        if (!cmdline.split("\0").includes(dir) && cwd !== dir) continue;
        const status = await Deno.readTextFile(`/proc/${entry.name}/status`).catch(() => "");
        if (status !== "") statuses.push(status);
      }
      await running;
      assert(statuses.length >= 2, `found ${statuses.length} processes of the call`);
      for (const status of statuses) {
        const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1).map(Number);
        const gids = /^Gid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1).map(Number);
        assertEquals(uids, Array(4).fill(TOOL_OWNER.uid), status);
        assertEquals(gids, Array(4).fill(TOOL_OWNER.gid), status);
        assertEquals(/^Groups:[ \t]*(.*)$/m.exec(status)![1].trim(), "", status);
        assertEquals(/^NoNewPrivs:\s+(\d)/m.exec(status)![1], "1", status);
        for (const set of ["CapInh", "CapPrm", "CapEff", "CapAmb"]) {
          assertEquals(new RegExp(`^${set}:\\s+(\\w+)`, "m").exec(status)![1], "0".repeat(16));
        }
      }
      // The command itself runs under the seccomp filter (bubblewrap loads it for its child).
      assert(statuses.some((status) => /^Seccomp:\s+2$/m.test(status)), "no filtered process");
    });
  },
});

Deno.test({
  name:
    "a write or shell grant on a folder root owns is refused with its own sentence and nothing is written; a read of a root-only file under a grant of root's reads nothing",
  ignore: !asRoot,
  fn: async () => {
    const rt = await sandboxRuntime();
    const dir = await Deno.makeTempDir({ prefix: "gurt-root-owned-" });
    try {
      await Deno.chmod(dir, 0o755);
      await Deno.writeTextFile(`${dir}/root-only.txt`, "ROOT-SECRET", { mode: 0o600 });
      await Deno.writeTextFile(`${dir}/public.txt`, "public");
      for (
        const spec of [
          specFor({ tool: "write_file", paths: [dir] }, "write_file", {
            path: `${dir}/planted.txt`,
            content: "x",
          }),
          shellIn("echo x > planted.txt", [dir]),
        ]
      ) {
        await assertRejects(() => rt.run(spec), RunError, RUN_ERRORS.rootOwned);
      }
      await assertRejects(() => Deno.stat(`${dir}/planted.txt`), Deno.errors.NotFound);
      const read = (path: string) =>
        rt.run(specFor({ tool: "read_file", paths: [dir] }, "read_file", { path }));
      await assertRejects(() => read(`${dir}/root-only.txt`), RunError, RUN_ERRORS.readFailed);
      assertEquals((await read(`${dir}/public.txt`)).content, "public");
    } finally {
      await rt.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a shell grant over folders of two different owners is refused; over folders of one owner, both are written as that owner",
  ignore: !asRoot,
  fn: async () => {
    await withSandbox({}, async (rt, dir) => {
      for (const sub of ["a", "b", "c"]) await Deno.mkdir(`${dir}/${sub}`);
      await ownTree(dir);
      await Deno.chown(`${dir}/c`, 61241, 61241);
      await assertRejects(
        () => rt.run(shellIn("echo x > f", [`${dir}/a`, `${dir}/c`])),
        RunError,
        RUN_ERRORS.mixedOwners,
      );
      await assertRejects(() => Deno.stat(`${dir}/a/f`), Deno.errors.NotFound);
      await rt.run(shellIn("echo x > f && echo y > ../b/f", [`${dir}/a`, `${dir}/b`]));
      for (const sub of ["a", "b"]) {
        const info = await Deno.lstat(`${dir}/${sub}/f`);
        assertEquals([info.uid, info.gid], [TOOL_OWNER.uid, TOOL_OWNER.gid]);
      }
    });
  },
});

Deno.test({
  name:
    "through a real core as root: the review's setuid reproduction, run by the task's own user, gains nothing, and the tool's file is the folder owner's",
  ignore: !asRoot,
  fn: async () => {
    await withOwnedDir(async (dir) => {
      await withBox({
        core: { asRoot: true },
        grants: { sh: grant({ tool: "shell", paths: [dir] }) },
      }, async (box) => {
        const started = await box.admin("POST", "/tasks", {
          worker: { kind: "cmd", command: ["sleep", "300"] },
          tools: ["shell"],
          budgetCents: null,
        });
        assertEquals(started.status, 200, JSON.stringify(started.body));
        const id = started.body.task.id as string;
        const socket = `${box.home}/tasks/${id}/broker.sock`;
        const answer = await requestJson(socket, {
          method: "POST",
          path: "/call",
          body: {
            tool: "shell",
            input: { command: "cp /usr/bin/id ./myid && chmod 4755 ./myid", cwd: dir },
            key: "k",
          },
        });
        assertEquals(answer.status, 200, JSON.stringify(answer.body));
        const info = await Deno.lstat(`${dir}/myid`);
        assertEquals([info.uid, info.mode! & 0o6000], [TOOL_OWNER.uid, 0]);
        const user = await Deno.lstat(`${box.home}/tasks/${id}/broker.sock`);
        const who = await runAs(user.uid!, user.gid!, `${dir}/myid`);
        assert(who.startsWith(`uid=${user.uid}(`) && !who.includes("euid"), who);
        await box.admin("POST", `/tasks/${id}/stop`);
      });
    });
  },
});
