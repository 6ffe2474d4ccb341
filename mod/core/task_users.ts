/**
 * As root, each task runs as its own Linux user `box-<id>`, which owns its socket and runs its
 * worker, so no task can open another's socket. Without root, tasks run as the owner's user and
 * the socket's 0600 mode inside the home is the boundary.
 */

/** A task's Linux identity. */
export interface TaskUser {
  name: string;
  uid: number;
  gid: number;
}

/** Creates (or finds) the user `box-<id>`: a system user with no home and no login shell. */
export async function ensureTaskUser(task: string): Promise<TaskUser> {
  const name = `box-${task}`;
  let found = await lookup(name);
  if (found === null) {
    const out = await new Deno.Command("useradd", {
      args: [
        "--system",
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        "/usr/sbin/nologin",
        "--user-group",
        name,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(
        `cannot create the task user ${name}: ${new TextDecoder().decode(out.stderr).trim()}`,
      );
    }
    found = await lookup(name);
    if (found === null) throw new Error(`the task user ${name} was created but cannot be found`);
  }
  return found;
}

/** Removes the user `box-<id>` when its task ends. */
export async function removeTaskUser(name: string): Promise<void> {
  await new Deno.Command("userdel", { args: [name], stdout: "null", stderr: "null" }).output();
}

async function lookup(name: string): Promise<TaskUser | null> {
  const passwd = await Deno.readTextFile("/etc/passwd");
  for (const line of passwd.split("\n")) {
    const fields = line.split(":");
    if (fields[0] === name) {
      return { name, uid: Number(fields[2]), gid: Number(fields[3]) };
    }
  }
  return null;
}
