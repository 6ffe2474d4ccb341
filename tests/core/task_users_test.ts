/**
 * A task's worker and its user, through a real core: a worker that cannot start ends its task at
 * once with the reason; as root, an ended task's user goes with every process it left, its uid is
 * not the next task's, its home is closed to whoever holds the uid later, and a start removes the
 * users no live task holds.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { runAs, startBox, startCmdTask, until, withBox } from "../kit/mod.ts";
import { ensureTaskUser, FIRST_ID, taskUsers } from "../../mod/core/task_users.ts";

/** How many processes, zombies aside, run with `uid` as their real or effective uid. */
function processesOf(uid: number): number {
  let count = 0;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const status = Deno.readTextFileSync(`/proc/${entry.name}/status`);
      if (/^State:\s+[ZX]/m.test(status)) continue;
      const ids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status);
      if (ids !== null && (Number(ids[1]) === uid || Number(ids[2]) === uid)) count++;
    } catch {
      // gone since the listing
    }
  }
  return count;
}

Deno.test("a worker that cannot start ends its task at once, failed with the reason, its socket gone", async () => {
  await withBox({}, async (box) => {
    const task = await startCmdTask(box, ["/no/such/program"]);
    assertEquals(task.state, "failed");
    assertStringIncludes(task.endReason, "the worker could not start");
    assertStringIncludes(task.endReason, "/no/such/program");
    const listed = (await box.admin("GET", `/tasks/${task.id}`)).body.task;
    assertEquals([listed.state, listed.endReason], ["failed", task.endReason]);
    assertEquals(
      await Deno.stat(`${box.home}/tasks/${task.id}/broker.sock`).catch(() => null),
      null,
    );
    const ended = (await box.records()).filter((r) => r.event.type === "task_ended");
    assertEquals(ended.map((r) => [r.event.task, r.event.state]), [[task.id, "failed"]]);
    assert(box.logs.some((line) => line.includes(`task ${task.id} failed: the worker could not`)));
  });
});

Deno.test("a task whose socket cannot be opened (its path too long for a Unix socket) ends at once, failed, saying why", async () => {
  // tasks/<id>/broker.sock is one byte longer than run/owner-broker/admin.sock: a home of 79 bytes
  // takes the admin socket (107 bytes, the most there is) but not a task's.
  const base = await Deno.makeTempDir({ prefix: "gurt-long-" });
  const home = `${base}/${"h".repeat(79 - base.length - 1)}`;
  assertEquals(home.length, 79);
  const box = await startBox({ home });
  try {
    const answer = await box.admin("POST", "/tasks", {
      worker: { kind: "none" },
      tools: ["example.echo"],
      budgetCents: null,
    });
    assertEquals(answer.status, 200, JSON.stringify(answer.body));
    const task = answer.body.task;
    assertEquals(task.state, "failed");
    assertStringIncludes(task.endReason, "its socket could not be opened");
    assertEquals((await box.admin("GET", `/tasks/${task.id}`)).body.task.state, "failed");
    const ended = (await box.records()).filter((r) => r.event.type === "task_ended");
    assertEquals(ended.map((r) => [r.event.task, r.event.state]), [[task.id, "failed"]]);
    await box.restart(); // an ended task is not reopened, so the start does not fail on it
  } finally {
    await box.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test({
  name:
    "as root, an ended task's user goes with every process it left, its home is closed to its uid, and the next task gets another uid",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    await withBox({ core: { asRoot: true } }, async (box) => {
      // A worker that leaves a process in a session of its own, then waits.
      const task = await startCmdTask(box, [
        "sh",
        "-c",
        "echo private > secret.txt; mktemp > made.txt; setsid sleep 300 & echo $! > escaped.pid; exec sleep 300",
      ]);
      const home = `${box.home}/tasks/${task.id}/home`;
      await until(async () =>
        (await Deno.readTextFile(`${home}/escaped.pid`).catch(() => "")) !== ""
      );
      const user = (await taskUsers()).find((u) => u.name === `box-${task.id}`)!;
      assert(user.uid >= FIRST_ID && user.gid === user.uid, JSON.stringify(user));
      assertEquals(user.home, box.home);
      const read = await runAs(user, `cat ${home}/secret.txt`);
      assertEquals([read.stdout.trim(), read.code], ["private", 0]);
      // Its temporary files are in its sandbox's own /tmp, not in the /tmp every user reads.
      const made = (await Deno.readTextFile(`${home}/made.txt`)).trim();
      assert(made.startsWith("/tmp/tmp."), made);
      assertEquals(await Deno.lstat(made).catch(() => null), null);

      // The escaped sleep's pid is its pid namespace's: count the uid's processes on the host.
      assert(processesOf(user.uid) >= 3, "the worker, its escaped sleep and the task init");
      assertEquals((await box.admin("POST", `/tasks/${task.id}/stop`)).status, 200);
      assertEquals(processesOf(user.uid), 0);
      assertEquals((await taskUsers()).some((u) => u.name === user.name), false);
      const info = await Deno.stat(home);
      assertEquals([info.uid, info.gid, info.mode! & 0o777], [0, 0, 0o700]);
      // Whoever holds that uid later cannot read what the task left.
      const { code } = await runAs(user, `cat ${home}/secret.txt`);
      assert(code !== 0);

      const next = await startCmdTask(box, ["sleep", "300"]);
      const nextUser = (await taskUsers()).find((u) => u.name === `box-${next.id}`)!;
      assert(nextUser.uid >= FIRST_ID && nextUser.uid !== user.uid);
      await box.admin("POST", `/tasks/${next.id}/stop`);
    });
  },
});

Deno.test({
  name:
    "as root, a start removes this home's task users that no live task holds, and leaves another home's",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startBox({ core: { asRoot: true } });
    const other = await Deno.makeTempDir({ prefix: "gurt-other-home-" });
    const made: string[] = [];
    try {
      const live = await startCmdTask(box, ["sleep", "300"]);
      const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
      // A user of this home whose task is gone; one of another home, and one of a home this core
      // cannot see (gone, or in another mount namespace): those are their homes' cores' to remove.
      const stray = await ensureTaskUser(`zs${suffix}`, box.home);
      const kept = [
        await ensureTaskUser(`zk${suffix}`, other),
        await ensureTaskUser(`zg${suffix}`, `${other}/not-here`),
      ];
      made.push(stray.name, ...kept.map((u) => u.name));

      await box.restart();
      const names = (await taskUsers()).map((u) => u.name);
      assert(!names.includes(stray.name), stray.name);
      for (const user of kept) assert(names.includes(user.name), user.name);
      assert(names.includes(`box-${live.id}`)); // reopened, and still its task's
      assert(box.logs.some((line) => line.includes(`removed ${stray.name}`)));
      await box.admin("POST", `/tasks/${live.id}/stop`);
    } finally {
      for (const name of made) {
        await new Deno.Command("userdel", { args: [name], stderr: "null" }).output();
      }
      await box.close();
      await Deno.remove(other, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "as root, a task user's group left without its user (a core killed between the two) does not stop the user being made",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const task = `zo${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
    const name = `box-${task}`;
    await new Deno.Command("groupadd", { args: ["--system", name] }).output();
    try {
      const user = await ensureTaskUser(task, "/tmp/nowhere");
      assertEquals(user.name, name);
      const group = (await Deno.readTextFile("/etc/group")).split("\n")
        .find((line) => line.startsWith(`${name}:`));
      assertEquals(group?.split(":")[2], String(user.gid));
    } finally {
      await new Deno.Command("userdel", { args: [name], stderr: "null" }).output();
      await new Deno.Command("groupdel", { args: [name], stderr: "null" }).output();
    }
  },
});

Deno.test({
  name:
    "as root, a restart writes and chowns nothing through the task's home: a link or a FIFO the task put there is left alone",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startBox({ core: { asRoot: true } });
    const victim = await Deno.makeTempFile({ prefix: "gurt-victim-" });
    try {
      await Deno.writeTextFile(victim, "root's own file\n");
      const linked = await startCmdTask(box, [
        "sh",
        "-c",
        `ln -s ${victim} mcp.json; rmdir tmp; ln -s ${victim} tmp; exec sleep 300`,
      ]);
      const fifo = await startCmdTask(box, ["sh", "-c", "mkfifo mcp.json; exec sleep 300"]);
      for (const task of [linked, fifo]) {
        const planted = `${box.home}/tasks/${task.id}/home/mcp.json`;
        await until(async () => (await Deno.lstat(planted).catch(() => null)) !== null);
      }
      const tmp = `${box.home}/tasks/${linked.id}/home/tmp`;
      await until(async () => (await Deno.lstat(tmp).catch(() => null))?.isSymlink === true);
      await box.restart(); // reopens both, writing each one's MCP configuration
      const info = await Deno.stat(victim);
      assertEquals([info.uid, await Deno.readTextFile(victim)], [0, "root's own file\n"]);
      for (const task of [linked, fifo]) {
        assertEquals((await box.admin("GET", `/tasks/${task.id}`)).body.task.state, "running");
        const config = await Deno.stat(`${box.home}/tasks/${task.id}/mcp.json`);
        assertEquals([config.uid, config.mode! & 0o777], [0, 0o644]);
        await box.admin("POST", `/tasks/${task.id}/stop`);
      }
    } finally {
      await box.close();
      await Deno.remove(victim);
    }
  },
});

Deno.test({
  name:
    "as root, processes a task left that signal everything of their uid cannot keep its user alive or stall its end",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    await withBox({ core: { asRoot: true } }, async (box) => {
      // One kills every process of its uid, over and over (its own worker first); one stops them.
      const killer = await startCmdTask(box, [
        "sh",
        "-c",
        "setsid sh -c 'while :; do kill -KILL -1 2>/dev/null; done' & exec sleep 300",
      ]);
      const stopper = await startCmdTask(box, [
        "sh",
        "-c",
        "setsid sh -c 'while :; do kill -STOP -1 2>/dev/null; done' & exec sleep 300",
      ]);
      const users = new Map((await taskUsers()).map((u) => [u.task, u]));
      // The killer's worker dies at once: on a slow machine its user may be gone already.
      const killerUser = users.get(killer.id);
      const stopperUser = users.get(stopper.id);
      assert(stopperUser !== undefined, "the stopper's task has no user");
      // The killer's worker dies at once, and its task ends with it.
      await until(async () =>
        (await box.admin("GET", `/tasks/${killer.id}`)).body.task.state === "failed"
      );
      const started = Date.now();
      assertEquals((await box.admin("POST", `/tasks/${stopper.id}/stop`)).status, 200);
      assert(Date.now() - started < 10_000, `the stop took ${Date.now() - started} ms`);
      await until(async () => !(await taskUsers()).some((u) => u.name === killerUser?.name));
      for (const user of killerUser === undefined ? [stopperUser] : [killerUser, stopperUser]) {
        assertEquals(processesOf(user.uid), 0, user.name);
        assert(!(await taskUsers()).some((u) => u.name === user.name), user.name);
      }
      assert(!box.logs.some((line) => line.includes("would not end")), box.logs.join("\n"));
    });
  },
});

Deno.test("a worker's TMPDIR is its sandbox's own /tmp, in a new task and in one reopened after a restart", async () => {
  await withBox({}, async (box) => {
    const task = await startCmdTask(box, [
      "sh",
      "-c",
      'echo "[$TMPDIR]" >> tmpdirs.txt; exec sleep 300',
    ]);
    const home = `${box.home}/tasks/${task.id}/home`;
    await until(async () =>
      (await Deno.readTextFile(`${home}/tmpdirs.txt`).catch(() => "")) !== ""
    );
    await box.restart();
    await until(async () =>
      (await Deno.readTextFile(`${home}/tmpdirs.txt`)).split("\n").length > 2
    );
    assertEquals(await Deno.readTextFile(`${home}/tmpdirs.txt`), "[/tmp]\n[/tmp]\n");
    assertEquals(
      await Deno.lstat(`${home}/tmp`).catch(() => null),
      null,
      "nothing made in its home",
    );
    await box.admin("POST", `/tasks/${task.id}/stop`);
  });
});
