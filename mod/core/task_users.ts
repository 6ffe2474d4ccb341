/**
 * As root, each task runs as its own Linux user `box-<id>`, which owns its socket and runs its
 * worker, so no task can open another's socket. Without root, tasks run as the owner's user and
 * the socket's 0600 mode inside the home is the boundary.
 *
 * A uid is not given to a second task: a later task holding it could read and change what the
 * first left owned by it, and signal what it left running. useradd gives a freed uid out
 * again at once, so each task user gets a uid (and its group the same gid) drawn at random from a
 * range of 1.6 billion far above any system's or person's, and not in use. When the task ends,
 * every process of the uid is stopped and killed, by root, before the user is removed (userdel
 * refuses a user with processes, and the uid would then outlive the task). A worker's /tmp is its sandbox's own
 * (mod/sandbox), seen by no other task.
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
export function ensureTaskUser(task: string, home: string): Promise<TaskUser> {
  return ensureUser(`box-${task}`, `${COMMENT}${task} ${encodeURIComponent(home)}`);
}

/** The comment of an app's user: no task's, so no sweep of task users ever removes it. */
const APP_COMMENT = "gurt app ";

/**
 * Creates (or finds) the user `box-app-<instance>` of an installed app of `home` (`instance` is the
 * app's install's own id, so two homes' apps of one name, or an app removed and added again, never
 * share a user), in the uid range of task users and never a uid given before.
 */
export function ensureAppUser(app: { name: string; instance: string }, home: string) {
  return ensureUser(
    `box-app-${app.instance}`,
    `${APP_COMMENT}${app.name} ${encodeURIComponent(home)}`,
  );
}

/** The user of an installed app (by its instance), if it has one. */
export async function findAppUser(instance: string): Promise<TaskUser | undefined> {
  const name = `box-app-${instance}`;
  for (const [found, , uid, gid] of await entries("/etc/passwd")) {
    if (found === name) return { name, uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

async function ensureUser(name: string, comment: string): Promise<TaskUser> {
  for (const [found, , uid, gid] of await entries("/etc/passwd")) {
    if (found === name) return { name, uid: Number(uid), gid: Number(gid) };
  }
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
      comment,
      name,
    ]);
    if (user === null) return { name, uid: id, gid: id };
    problem = user;
    await run("groupdel", [name]);
  }
  throw new Error(`cannot create the user ${name}: ${problem || "no free uid was found"}`);
}

/**
 * Stops, then kills, every process with $1 as its real, effective, saved or file-system uid, as
 * root, so that none of them can signal the killer back: a round stops (SIGSTOP) each one found,
 * and rounds go on until every one left is stopped or dead, so none can fork any more; then all
 * are killed (SIGKILL ends a stopped process too), and it waits until they are gone. Only sh, grep
 * and /proc: no other tool may be installed. Exits 0 when none is left, 1 when some outlived every
 * round.
 */
const KILL_ALL = `
uid="$1"
# The pids of uid's processes, but those whose state is one of the letters $1.
pids() {
  for f in $(grep -lE "^Uid:.*[[:space:]]$uid([[:space:]]|\$)" /proc/[0-9]*/status 2>/dev/null); do
    grep -q "^State:[[:space:]]*[$1]" "$f" 2>/dev/null || { p=\${f%/status}; echo "\${p#/proc/}"; }
  done
}
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  running=$(pids TZX)
  [ -z "$running" ] && break
  kill -STOP $running 2>/dev/null
done
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  alive=$(pids ZX)
  [ -z "$alive" ] && exit 0
  kill -KILL $alive 2>/dev/null
  sleep 0.05
done
exit 1
`;

/**
 * Removes a task's user: kills every process running as its uid (a worker may have left some
 * behind, in a session of their own; the killing is done by root, which none of them may signal),
 * then the user and its group. Returns what went wrong, or null.
 */
export async function removeTaskUser(user: TaskUser): Promise<string | null> {
  const killed = await new Deno.Command("sh", {
    args: ["-c", KILL_ALL, "sh", String(user.uid)],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdout: "null",
    stderr: "null",
  }).output().catch(() => null);
  if (killed === null || !killed.success) {
    return `processes of the task user ${user.name} would not end; the user is kept`;
  }
  const problem = await run("userdel", [user.name]);
  if (problem !== null) return `cannot remove the task user ${user.name}: ${problem}`;
  await run("groupdel", [user.name]); // userdel removes it where USERGROUPS_ENAB is set
  return null;
}

/** A task user as /etc/passwd lists it: its task and home where its comment names them. */
export interface ListedTaskUser extends TaskUser {
  task: string;
  home: string | null;
}

/** The `box-…` users of /etc/passwd. */
export async function taskUsers(): Promise<ListedTaskUser[]> {
  const out: ListedTaskUser[] = [];
  for (const [name, , uid, gid, comment] of await entries("/etc/passwd")) {
    if (name === undefined || !name.startsWith("box-")) continue;
    if (comment?.startsWith(APP_COMMENT)) continue; // an app's, kept while the app is installed
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
  return (await entries("/etc/group")).some((fields) => fields[0] === name);
}

/** Whether `id` is a uid in /etc/passwd or a gid in /etc/group. */
async function idInUse(id: number): Promise<boolean> {
  for (const file of ["/etc/passwd", "/etc/group"]) {
    if ((await entries(file)).some((fields) => Number(fields[2]) === id)) return true;
  }
  return false;
}

/** The lines of /etc/passwd or /etc/group, split into their fields. */
async function entries(file: string): Promise<string[][]> {
  return (await Deno.readTextFile(file)).split("\n").map((line) => line.split(":"));
}

/** Runs a user-administration command; its error text, or null when it succeeded. */
async function run(program: string, args: string[]): Promise<string | null> {
  const out = await new Deno.Command(program, { args, stdout: "null", stderr: "piped" }).output();
  if (out.success) return null;
  return new TextDecoder().decode(out.stderr).trim() || `${program} exited with ${out.code}`;
}
