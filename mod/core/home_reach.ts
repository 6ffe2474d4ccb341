/**
 * Whether a task's user can reach a path: every folder on the way to it must let the user pass
 * (the search bit of the owner, the group or others, whichever applies to the user, who has no
 * other group). Used to say which folder is closed when a worker cannot start as that user.
 */

/** A folder that a user may not pass: its path, its mode and its owner's uid. */
export interface ClosedFolder {
  folder: string;
  mode: number;
  owner: number;
}

/**
 * The first folder on the way to `path` that the user `who` may not pass, or null if none is
 * closed. Both the path as written and the folders its links lead to are looked at.
 */
export async function firstClosedFolder(
  path: string,
  who: { uid: number; gid: number },
): Promise<ClosedFolder | null> {
  const real = await Deno.realPath(path).catch(() => path);
  for (const folder of [...foldersOn(path), ...foldersOn(real)]) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(folder);
    } catch {
      return null; // a path that is not there: the caller's own error says so
    }
    const mode = info.mode! & 0o7777;
    const bit = info.uid === who.uid ? 0o100 : info.gid === who.gid ? 0o010 : 0o001;
    if ((mode & bit) === 0) return { folder, mode, owner: info.uid! };
  }
  return null;
}

/**
 * The sentence for a path a user cannot reach because of `closed`; `who` names the user and the
 * path, as in `its user box-t1 (uid 536870913) cannot reach its home /srv/box/tasks/t1/home`.
 */
export function unreachableText(who: string, closed: ClosedFolder): string {
  const mode = `0${closed.mode.toString(8).padStart(3, "0")}`;
  return `${who}: ${closed.folder} (mode ${mode}, owner uid ${closed.owner}) lets no other user ` +
    `through; keep the box home under folders every user may pass (as /var/lib/gurt is), or run ` +
    `chmod o+x ${closed.folder}; see runbook.md#task-home-unreachable`;
}

/** "/", "/a", "/a/b" for "/a/b". */
function foldersOn(path: string): string[] {
  const out = ["/"];
  let current = "";
  for (const part of path.split("/")) {
    if (part === "") continue;
    current += `/${part}`;
    out.push(current);
  }
  return out;
}
