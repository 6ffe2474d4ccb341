/**
 * A task's workdir (issue 35), against a real core as root with `cmd` workers in their sandboxes:
 * what the task writes is on the host, the folder owner's; every protected path is read-only and
 * every `.env*` file covered; links, renames, setuid bits and FIFOs reach nothing; and the grant
 * decides which folders a task may have at all, one task at a time.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  endOf,
  events,
  makeOwnerTree,
  OTHER,
  OWNER,
  ownerOf,
  startWorkdirTask,
  workdirBox,
} from "./workdir_kit.ts";
import { PROTECTED_PATHS } from "../../mod/workdir/mod.ts";
import { gurt, until } from "../kit/mod.ts";

const asRoot = Deno.uid() === 0;

/** A sh function that runs $1 and says ALLOWED or BLOCKED (with the error) for its name $2. */
const TRY =
  `try_() { if sh -c "$1" >/tmp/out 2>&1; then echo "ALLOWED $2"; else echo "BLOCKED $2: $(tr '\\n' ' ' </tmp/out)"; fi; }`;

Deno.test({
  name:
    "a task writes in its workdir as the folder's owner, and every protected path is read-only: each write fails with EROFS or EACCES and the host's files stay as they were",
  ignore: !asRoot,
  fn: async () => {
    const tree = await makeOwnerTree();
    const box = await workdirBox(tree, { toml: `[tasks]\nprotected_paths = ["deploy.sh"]\n` });
    try {
      const hooks = () =>
        [...Deno.readDirSync(`${tree.shop}/.git/hooks`)].map((e) => e.name).sort();
      const hookBefore = hooks();
      const configBefore = await Deno.readTextFile(`${tree.shop}/.git/config`);
      const protectedWrites = [...PROTECTED_PATHS.map((p) => p.path), "deploy.sh"].map((path) => {
        const target = PROTECTED_PATHS.find((p) => p.path === path)?.kind === "dir"
          ? `${path}/planted`
          : path;
        return `try_ 'echo planted > ${target}' ${path}`;
      });
      const script = `${TRY}
        echo "cwd $(pwd)"
        echo hello > notes.txt && echo wrote notes
        mkdir -p made/deeper && echo deep > made/deeper/file.txt && echo wrote deep
        mkdir -p vendor/lib/.git/hooks && echo nested > vendor/lib/.git/hooks/post-checkout
        echo "env [$(cat .env)] envrc [$(cat .envrc)]"
        ${protectedWrites.join("\n")}
        try_ 'rm -rf .git/hooks' rm-hooks
        try_ 'mv .vscode elsewhere' mv-vscode
        try_ 'mv .git .git-aside' mv-git
        try_ 'rmdir .git' rm-git
        try_ 'mv .git/hooks .git/hooks-aside' mv-hooks
        try_ 'echo x > .env' write-env
        echo done`;
      const started = await startWorkdirTask(box, script, [{ path: tree.shop }]);
      assertEquals(started.status, 200, JSON.stringify(started.body));
      const { task, log, journal } = await endOf(box, started.body.task.id);
      assertEquals(task.state, "done", log);
      assertStringIncludes(log, `cwd ${tree.shop}`);
      assertStringIncludes(log, "wrote notes");
      assertStringIncludes(log, "wrote deep");
      // The writes are on the host, the owner's: not the task's uid, not root.
      assertEquals(await Deno.readTextFile(`${tree.shop}/notes.txt`), "hello\n");
      for (const path of ["notes.txt", "made", "made/deeper", "made/deeper/file.txt"]) {
        assertEquals(ownerOf(`${tree.shop}/${path}`), OWNER, path);
        assertEquals(Deno.lstatSync(`${tree.shop}/${path}`).gid, OWNER, path);
      }
      // The .env files are not there for the task (an empty file), and stay the owner's.
      assertStringIncludes(log, "env [] envrc []");
      assertEquals(await Deno.readTextFile(`${tree.shop}/.env`), "API_KEY=sk-live-owner\n");
      // Every protected path: refused, read-only or not permitted.
      for (const path of [...PROTECTED_PATHS.map((p) => p.path), "deploy.sh"]) {
        const line = log.split("\n").find((l) => l.includes(` ${path}:`) || l.endsWith(` ${path}`));
        assert(line !== undefined && line.startsWith("BLOCKED"), `${path}: ${line}\n${log}`);
        assert(
          /Read-only file system|Permission denied/.test(line),
          `${path} failed otherwise: ${line}`,
        );
      }
      for (const what of ["rm-hooks", "mv-vscode", "mv-git", "rm-git", "mv-hooks", "write-env"]) {
        assertStringIncludes(log, `BLOCKED ${what}`);
      }
      // Nothing of them reached the host, and no placeholder was left behind.
      assertEquals(await Deno.readTextFile(`${tree.shop}/.git/config`), configBefore);
      assertEquals(hooks(), hookBefore);
      assertEquals(await Deno.lstat(`${tree.shop}/.git-aside`).catch(() => null), null);
      for (
        const path of [".vscode", ".claude", ".mcp.json", ".bashrc", "deploy.sh", ".gitmodules"]
      ) {
        assertEquals(await Deno.lstat(`${tree.shop}/${path}`).catch(() => null), null, path);
      }
      assertEquals(await Deno.readTextFile(`${tree.shop}/.envrc`), "export X=1\n");
      // The journal: the mount with its read-only paths, and the summary of the task's writes.
      const [mounted] = events(journal, "workdir.mounted");
      assertEquals(mounted.path, tree.shop);
      assertEquals(mounted.mode, "rw");
      assert(mounted.read_only_paths.includes(".git/hooks"), JSON.stringify(mounted));
      const [writes] = events(journal, "workdir.writes");
      assertEquals(writes.workdir, tree.shop);
      assertEquals(writes.added, 3, JSON.stringify(writes));
      assertEquals(writes.files.added.map((f: { path: string }) => f.path), [
        "made/deeper/file.txt",
        "notes.txt",
        "vendor/lib/.git/hooks/post-checkout",
      ]);
      assertEquals(writes.files.added[1].after, 6);
      // No protected path changed; the hook below the top is flagged for the owner's review.
      const flagged = events(journal, "fs.blocked");
      assertEquals(flagged.map((f) => f.path), [
        "vendor/lib/.git/hooks",
        "vendor/lib/.git/hooks/post-checkout",
      ]);
      assertStringIncludes(flagged[0].reason, "below the workdir's top");
      assertEquals(writes.changed + writes.removed, 0, JSON.stringify(writes));
      // The Decision record came before the task ran.
      const records = (await box.records()).map((r) => r.event);
      const decision = records.findIndex((r) =>
        r.type === "decision" && r.tool === "task.workdir" && r.session === task.id
      );
      assert(decision >= 0, JSON.stringify(records));
      assertEquals(records[decision].outcome, { outcome: "allowed" });
      assertEquals(records[decision].grant, "shop");
      assertEquals(JSON.parse(records[decision].arguments), { path: tree.shop, read_only: false });
      // gurt task show names the workdir and its mode, and the summary in words.
      const shown = await gurt(["--home", box.home, "task", "show", task.id]);
      assertEquals(shown.code, 0, shown.stderr);
      assertStringIncludes(shown.stdout, `workdir ${tree.shop} (writable, grant auto)`);
      assertStringIncludes(shown.stdout, `workdir ${tree.shop}: 3 added, 0 changed, 0 removed`);
      assertStringIncludes(shown.stdout, "blocked vendor/lib/.git/hooks/post-checkout");
      assertStringIncludes(shown.stdout, "+ notes.txt none -> 6 B");
    } finally {
      await box.close();
      await Deno.remove(tree.top, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "links, a rename of the folder, a setuid bit and a FIFO from inside a workdir reach nothing: a symlink out reads nothing of the host, a hard link out fails, the folder stays where it is, no setuid file nor FIFO is made",
  ignore: !asRoot,
  fn: async () => {
    const tree = await makeOwnerTree();
    const box = await workdirBox(tree);
    try {
      const script = `${TRY}
        try_ 'cat link-out' read-link-out
        try_ 'ln -s ${tree.alice}/secret.txt new-link && cat new-link' new-link-out
        try_ 'ln -s /etc/shadow shadow-link && cat shadow-link' shadow-link
        try_ 'echo x > $HOME/h && ln $HOME/h hard-home' hard-link-home
        try_ 'ln /etc/passwd hard-etc' hard-link-etc
        try_ 'ln /usr/bin/sh hard-sh' hard-link-usr
        try_ 'mv "$PWD" "$PWD.moved"' rename-folder
        try_ 'mv "$PWD" /tmp/shop' move-folder
        try_ 'touch suid && chmod u+s suid' chmod-setuid
        try_ 'touch sgid && chmod g+s sgid' chmod-setgid
        try_ 'install -m 4755 /usr/bin/true installed-suid' install-setuid
        try_ 'mkfifo fifo' mkfifo
        try_ 'python3 -c "import os; os.mkfifo(\\"fifo2\\")"' python-mkfifo
        try_ 'mknod dev c 1 3' mknod-device
        echo done`;
      const started = await startWorkdirTask(box, script, [{ path: tree.shop }]);
      assertEquals(started.status, 200, JSON.stringify(started.body));
      const { task, log } = await endOf(box, started.body.task.id);
      assertEquals(task.state, "done", log);
      if (Deno.env.get("SHOW_LOG")) console.log(log);
      for (
        const what of [
          "read-link-out",
          "new-link-out",
          "shadow-link",
          "hard-link-home",
          "hard-link-etc",
          "hard-link-usr",
          "rename-folder",
          "move-folder",
          "chmod-setuid",
          "chmod-setgid",
          "install-setuid",
          "mkfifo",
          "python-mkfifo",
          "mknod-device",
        ]
      ) {
        assertStringIncludes(log, `BLOCKED ${what}`);
      }
      assert(!log.includes("outside the workdir"), log);
      // On the host: the folder where it was, nothing the task could not make, no bit, no FIFO.
      assert(Deno.statSync(tree.shop).isDirectory);
    } finally {
      await box.close();
    }
    try {
      for (const name of Deno.readDirSync(tree.shop)) {
        const info = Deno.lstatSync(`${tree.shop}/${name.name}`);
        assert((info.mode ?? 0) & 0o6000 ? false : true, `${name.name} has a set-id bit`);
        assert(!info.isFifo, `${name.name} is a FIFO`);
        assert(info.isFile || info.isDirectory || info.isSymlink, name.name);
        assertEquals(info.uid, OWNER, name.name);
      }
      assertEquals(await Deno.lstat(`${tree.code}/shop.moved`).catch(() => null), null);
    } finally {
      await Deno.remove(tree.top, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the grant decides: a path with .. is refused, a folder no grant covers and one owned by another user than the grant path's owner fail the task before its worker starts, each with its Decision record",
  ignore: !asRoot,
  fn: async () => {
    const tree = await makeOwnerTree();
    const box = await workdirBox(tree);
    try {
      const marker = `${tree.top}/ran`;
      const script = `touch ${marker}`;
      // .. in the path: refused at the door, nothing started.
      const dots = await startWorkdirTask(box, script, [{ path: `${tree.code}/shop/../../other` }]);
      assertEquals(dots.status, 400, JSON.stringify(dots.body));
      assertStringIncludes(JSON.stringify(dots.body), "..");
      // Not covered: tree.alice/other is the owner's, outside the grant's path.
      const uncovered = await startWorkdirTask(box, script, [{ path: `${tree.alice}/other` }]);
      assertEquals(uncovered.status, 200);
      const one = await endOf(box, uncovered.body.task.id);
      assertEquals(one.task.state, "failed");
      assertStringIncludes(one.task.endReason, "no_grant");
      // Another user's folder under the grant's path.
      const bobs = await startWorkdirTask(box, script, [{ path: `${tree.code}/bobs` }]);
      const two = await endOf(box, bobs.body.task.id);
      assertEquals(two.task.state, "failed");
      assertStringIncludes(two.task.endReason, `belongs to uid ${OTHER}, not to uid ${OWNER}`);
      assertEquals(ownerOf(`${tree.code}/bobs`), OTHER);
      // A folder that is a link to the workdir: the path has a link on its way.
      await Deno.symlink(tree.shop, `${tree.code}/shortcut`);
      await Deno.chown(`${tree.code}/shortcut`, OWNER, OWNER);
      const linked = await startWorkdirTask(box, script, [{ path: `${tree.code}/shortcut` }]);
      const three = await endOf(box, linked.body.task.id);
      assertEquals(three.task.state, "failed");
      // None of their workers ran.
      assertEquals(await Deno.lstat(marker).catch(() => null), null);
      const decisions = (await box.records()).map((r) => r.event).filter((r) =>
        r.type === "decision" && r.tool === "task.workdir"
      );
      const outcome = (task: string) => decisions.find((r) => r.session === task)?.outcome;
      assertEquals(outcome(uncovered.body.task.id), { outcome: "denied", reason: "no_grant" });
      assertEquals(outcome(bobs.body.task.id), { outcome: "allowed" });
    } finally {
      await box.close();
      await Deno.remove(tree.top, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the workdir of another live task is refused, the same folder or one inside it, until that task ends",
  ignore: !asRoot,
  fn: async () => {
    const tree = await makeOwnerTree();
    const box = await workdirBox(tree);
    try {
      const gate = `${tree.top}/gate`;
      const first = await startWorkdirTask(
        box,
        `echo first > first.txt; while [ ! -e ${tree.shop}/release ]; do sleep 0.05; done`,
        [{ path: tree.shop }],
      );
      assertEquals(first.body.task.state, "running", JSON.stringify(first.body));
      for (const path of [tree.shop, `${tree.shop}/src`, tree.code]) {
        const second = await startWorkdirTask(box, `touch ${gate}`, [{ path }]);
        const end = await endOf(box, second.body.task.id);
        assertEquals(end.task.state, "failed", path);
        assertStringIncludes(end.task.endReason, `in use by the live task ${first.body.task.id}`);
      }
      assertEquals(await Deno.lstat(gate).catch(() => null), null);
      await Deno.writeTextFile(`${tree.shop}/release`, "");
      assertEquals((await endOf(box, first.body.task.id)).task.state, "done");
      // Once it has ended, the folder may be another task's.
      const third = await startWorkdirTask(box, "cat first.txt", [{ path: tree.shop }]);
      const end = await endOf(box, third.body.task.id);
      assertEquals(end.task.state, "done", end.log);
      assertStringIncludes(end.log, "first");
    } finally {
      await box.close();
      await Deno.remove(tree.top, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a workdir whose grant says ask waits for the owner: gurt approve N mounts it and the worker starts; a refusal fails the task with nothing mounted",
  ignore: !asRoot,
  fn: async () => {
    const tree = await makeOwnerTree();
    const box = await workdirBox(tree, { mode: "ask" });
    try {
      for (const answer of ["approve", "refuse"] as const) {
        const started = await startWorkdirTask(box, `echo ${answer} > ${answer}.txt`, [{
          path: tree.shop,
          readOnly: false,
        }]);
        assertEquals(started.status, 200, JSON.stringify(started.body));
        const id = started.body.task.id;
        let pending: number[] = [];
        await until(async () => {
          pending = (await box.admin("GET", "/approvals")).body.items
            .filter((a: { task: string }) => a.task === id).map((a: { approval: number }) =>
              a.approval
            );
          return pending.length === 1;
        }, 30_000);
        // Nothing of the task has run, nothing is mounted yet.
        assertEquals(await Deno.lstat(`${tree.shop}/${answer}.txt`).catch(() => null), null);
        const said = await gurt(["--home", box.home, answer, String(pending[0])]);
        assertEquals(said.code, 0, said.stderr);
        const end = await endOf(box, id);
        if (answer === "approve") {
          assertEquals(end.task.state, "done", end.log);
          assertEquals(await Deno.readTextFile(`${tree.shop}/approve.txt`), "approve\n");
          assertEquals(ownerOf(`${tree.shop}/approve.txt`), OWNER);
        } else {
          assertEquals(end.task.state, "failed");
          assertStringIncludes(end.task.endReason, "the owner refused the workdir");
          assertEquals(await Deno.lstat(`${tree.shop}/refuse.txt`).catch(() => null), null);
        }
      }
      const decisions = (await box.records()).map((r) => r.event).filter((r) =>
        r.type === "decision" && r.tool === "task.workdir"
      );
      assertEquals(decisions.map((r) => r.outcome), [{ outcome: "ask" }, { outcome: "ask" }]);
    } finally {
      await box.close();
      await Deno.remove(tree.top, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a read-only workdir (PATH:ro) refuses every write, and a grant with include_env_files shows the .env files",
  ignore: !asRoot,
  fn: async () => {
    const tree = await makeOwnerTree();
    const box = await workdirBox(tree, { includeEnv: true });
    try {
      const script = `${TRY}
        echo "env [$(cat .env)]"
        cat src/app.py
        try_ 'echo x > new.txt' write-new
        try_ 'echo x >> src/app.py' append
        try_ 'rm src/app.py' remove
        try_ 'mkdir made' mkdir
        try_ 'echo x > .env' write-env`;
      const started = await startWorkdirTask(box, script, [{ path: tree.shop, readOnly: true }]);
      const { task, log, journal } = await endOf(box, started.body.task.id);
      assertEquals(task.state, "done", log);
      assertStringIncludes(log, "env [API_KEY=sk-live-owner]");
      assertStringIncludes(log, 'print("hi")');
      for (const what of ["write-new", "append", "remove", "mkdir", "write-env"]) {
        assertStringIncludes(log, `BLOCKED ${what}: `);
      }
      assert(!/ALLOWED/.test(log), log);
      assertStringIncludes(log, "Read-only file system");
      const [mounted] = events(journal, "workdir.mounted");
      assertEquals(mounted.mode, "ro");
      const [writes] = events(journal, "workdir.writes");
      assertEquals([writes.added, writes.changed, writes.removed], [0, 0, 0]);
      assertEquals(await Deno.lstat(`${tree.shop}/new.txt`).catch(() => null), null);
      assertEquals(task.workdirs, [{
        path: tree.shop,
        readOnly: true,
        mode: "auto",
        grant: "shop",
        includeEnvFiles: true,
      }]);
    } finally {
      await box.close();
      await Deno.remove(tree.top, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a task with a workdir caught by a gurt serve restart gets it again: its restarted worker runs in the folder, and its end unmounts it",
  ignore: !asRoot,
  fn: async () => {
    const tree = await makeOwnerTree();
    const box = await workdirBox(tree);
    try {
      const started = await startWorkdirTask(
        box,
        `echo run >> runs.txt; while [ ! -e release ]; do sleep 0.05; done`,
        [{ path: tree.shop }],
      );
      const id = started.body.task.id;
      const runs = () => Deno.readTextFile(`${tree.shop}/runs.txt`).catch(() => "");
      await until(async () => (await runs()) === "run\n", 30_000);
      await box.restart();
      await until(async () => (await runs()) === "run\nrun\n", 30_000);
      await Deno.writeTextFile(`${tree.shop}/release`, "");
      const end = await endOf(box, id);
      assertEquals(end.task.state, "done", end.log);
      assertEquals(ownerOf(`${tree.shop}/runs.txt`), OWNER);
      const mounts = await new Deno.Command("findmnt", { args: ["-rn", "-o", "TARGET"] }).output();
      const left = new TextDecoder().decode(mounts.stdout).split("\n")
        .filter((point) => point.startsWith(`${box.home}/tasks/${id}/workdirs`));
      assertEquals(left, []);
      assertEquals(events(end.journal, "workdir.mounted").length, 2);
    } finally {
      await box.close();
      await Deno.remove(tree.top, { recursive: true });
    }
  },
});
