/**
 * As root, each task runs as its own Linux user `box-<id>`, which owns its socket and runs its
 * worker, so no task can open another's socket. Without root, tasks run as the owner's user and
 * the socket's 0600 mode inside the home is the boundary.
 *
 * A uid is not given to a second task: a later task holding it could read and change what the
 * first left owned by it, and signal what it left running. useradd gives a freed uid out
 * again at once, so each task user gets a uid (and its group the same gid) drawn at random from a
 * range of 1.6 billion far above any system's or person's, and not in use. When the task ends,
 * every process of the uid is killed before the user is removed (userdel refuses a user with
 * processes, and the uid would then outlive the task). A worker's TMPDIR is in its own home; a
 * file it writes in /tmp by name is as readable there as any program's (workers keep the usual
 * umask).
 *
 * The user's comment names the task and its home, so that a later start of the same home can
 * remove the users of its tasks that are no longer live (after a crash).
 */

/** A task's Linux identity. */
export interface TaskUser {
  name: string;
  uid: number;
  gid: number;
}

/** The uids and gids given to task users: [FIRST_ID, FIRST_ID + ID_COUNT). */
export const FIRST_ID = 0x2000_0000;
export const ID_COUNT = 0x5fff_0000;

const COMMENT = "gurt task ";

/** Creates (or finds) the user `box-<id>` of a task of `home`: no home, no login shell. */
export async function ensureTaskUser(task: string, home: string): Promise<TaskUser> {
  const name = `box-${task}`;
  const found = (await taskUsers()).find((user) => user.name === name);
  if (found !== undefined) return found;
  // Its group without it: a core killed between the two commands below left it.
  if (await groupExists(name)) {
    const stale = await run("groupdel", [name]);
    if (stale !== null) throw new Error(`cannot remove the group ${name} left alone: ${stale}`);
  }
  let problem = "";
  for (let attempt = 0; attempt < 8; attempt++) {
    const id = FIRST_ID + Math.floor(Math.random() * ID_COUNT);
    if (await idInUse(id)) continue;
    const group = await run("groupadd", ["--system", "--gid", String(id), name]);
    if (group !== null) {
      problem = group;
      continue; // taken since the look (or the name is): try another
    }
    const user = await run("useradd", [
      "--system",
      "--uid",
      String(id),
      "--gid",
      String(id),
      "--no-create-home",
      "--no-log-init",
      "--home-dir",
      "/nonexistent",
      "--shell",
      "/usr/sbin/nologin",
      "--comment",
      `${COMMENT}${task} ${encodeURIComponent(home)}`,
      name,
    ]);
    if (user === null) return { name, uid: id, gid: id };
    problem = user;
    await run("groupdel", [name]);
  }
  throw new Error(`cannot create the task user ${name}: ${problem || "no free uid was found"}`);
}

/**
 * Removes a task's user: kills every process running as its uid (a worker may have left some
 * behind, in a session of their own), then the user and its group. Returns what went wrong, or
 * null. userdel refuses while a process of the user runs, so a process that outlived a round is
 * found by it, and killed in the next.
 */
export async function removeTaskUser(user: TaskUser): Promise<string | null> {
  let problem: string | null = null;
  for (let round = 0; round < 5; round++) {
    // kill -1 as the uid: every process the uid may signal, which are its own, at once (a process
    // being killed cannot fork). sh's own kill, as no other may be installed.
    await new Deno.Command("sh", {
      args: ["-c", "kill -KILL -1"],
      uid: user.uid,
      gid: user.gid,
      stdout: "null",
      stderr: "null",
    }).output().catch(() => null);
    problem = await run("userdel", [user.name]);
    if (problem === null) {
      await run("groupdel", [user.name]); // userdel removes it where USERGROUPS_ENAB is set
      return null;
    }
    if (!/currently used by process/.test(problem)) break;
    await new Promise((resolve) => setTimeout(resolve, 20 * (round + 1)));
  }
  return `cannot remove the task user ${user.name}: ${problem}`;
}

/** A task user as /etc/passwd lists it: its task and home where its comment names them. */
export interface ListedTaskUser extends TaskUser {
  task: string;
  home: string | null;
}

/** The `box-…` users of /etc/passwd. */
export async function taskUsers(): Promise<ListedTaskUser[]> {
  const out: ListedTaskUser[] = [];
  for (const line of (await Deno.readTextFile("/etc/passwd")).split("\n")) {
    const [name, , uid, gid, comment] = line.split(":");
    if (name === undefined || !name.startsWith("box-")) continue;
    let home: string | null = null;
    if (comment?.startsWith(COMMENT)) {
      try {
        home = decodeURIComponent(comment.slice(COMMENT.length).split(" ")[1] ?? "") || null;
      } catch {
        home = null;
      }
    }
    out.push({ name, uid: Number(uid), gid: Number(gid), task: name.slice(4), home });
  }
  return out;
}

/** Whether /etc/group has a group called `name`. */
async function groupExists(name: string): Promise<boolean> {
  const groups = await Deno.readTextFile("/etc/group");
  return groups.split("\n").some((line) => line.split(":")[0] === name);
}

/** Whether `id` is a uid in /etc/passwd or a gid in /etc/group. */
async function idInUse(id: number): Promise<boolean> {
  for (const file of ["/etc/passwd", "/etc/group"]) {
    for (const line of (await Deno.readTextFile(file)).split("\n")) {
      if (Number(line.split(":")[2]) === id) return true;
    }
  }
  return false;
}

/** Runs a user-administration command; its error text, or null when it succeeded. */
async function run(program: string, args: string[]): Promise<string | null> {
  const out = await new Deno.Command(program, { args, stdout: "null", stderr: "piped" }).output();
  if (out.success) return null;
  return new TextDecoder().decode(out.stderr).trim() || `${program} exited with ${out.code}`;
}
