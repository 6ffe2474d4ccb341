/**
 * The session helper (session_helper.c, built by tools/build_session_helper.sh): a 2.1 KB static
 * x86-64 Linux program that makes itself the leader of a new session, so of a new process group,
 * and then runs a command as execvp would: `helper program arg…`, the environment unchanged. It
 * is how the guest starts an exec in its own process group at the price of a bare spawn: Deno's
 * `detached: true` forks the whole daemon (1–3 ms, growing with its memory), and util-linux
 * `setsid` costs a dynamically linked exec (≈ 0.65 ms).
 *
 * If it cannot start the program it writes `gurt-setsid: errno NNN` to stderr and exits 127, so
 * the daemon can tell a program that could not start from one that ran ({@link helperFailure}).
 * Run as `helper --gurt-watch` it is the guest's watcher instead (group_watcher.ts).
 */
import { filesHelperElf } from "./files_helper.ts";
import { SESSION_HELPER_ELF_BASE64 } from "./session_helper_elf.ts";

/** The helper's bytes. */
export function sessionHelperElf(): Uint8Array {
  return Uint8Array.from(atob(SESSION_HELPER_ELF_BASE64), (char) => char.charCodeAt(0));
}

/** Where the helpers were written, and how to remove them. */
export interface InstalledHelper {
  /** The session helper, or null where it cannot serve (util-linux setsid is used instead). */
  path: string | null;
  /** The files helper (files_helper.ts), or null where it cannot serve (file routes: 503). */
  files: string | null;
  remove(): Promise<void>;
}

/**
 * The helper's folder is `gurt-guest-<pid of the guest>-<random>` in the temporary folder. It is
 * made as `gurt-guest-new-<random>`, locked, and only then renamed: a folder by the first name is
 * always locked while its guest lives, so one whose lock is free is swept at once.
 */
const HELPER_DIR = /^gurt-guest-[1-9][0-9]*-/;

/** A folder still by its first name: its guest may not have locked it yet. */
const NEW_HELPER_DIR = /^gurt-guest-new-/;

/** A folder by its first name younger than this is never swept: its guest may be locking it. */
const SWEEP_NEW_AFTER_MS = 60_000;

/**
 * Writes the session helper and the files helper into a new private directory (0700, the files
 * 0500) and checks that each runs there: the session helper starts a new session, the files helper
 * lists a folder (openat2 needs Linux 5.6). Returns null where neither can serve: not x86-64 Linux,
 * or a temporary directory mounted noexec; the guest then uses util-linux setsid, and its file
 * routes answer 503. First it removes the directories that guests killed before they could remove
 * their own left behind.
 */
export async function installSessionHelper(): Promise<InstalledHelper | null> {
  if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") return null;
  const made = await Deno.makeTempDir({ prefix: "gurt-guest-new-" });
  const tmp = made.slice(0, made.lastIndexOf("/"));
  let dir = made;
  // Held for the guest's life: the kernel drops the lock when the guest dies, however it dies,
  // which is how another guest knows the folder is left over (its pid may be in another pid
  // namespace, or reused). The lock is the folder's own, so it stays through the rename.
  let lock: Deno.FsFile | null = null;
  const remove = async () => {
    lock?.close();
    lock = null;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    lock = await Deno.open(dir, { read: true });
    await lock.lock(true);
    dir = `${tmp}/gurt-guest-${Deno.pid}-${made.slice(tmp.length + "/gurt-guest-new-".length)}`;
    await Deno.rename(made, dir);
    await removeLeftHelpers(tmp);
    await Deno.chmod(dir, 0o700);
    const path = await written(`${dir}/setsid`, sessionHelperElf());
    // sh prints its own /proc stat line: "pid (sh) state ppid pgrp session …".
    const probe = await firstRun(path, {
      args: ["/bin/sh", "-c", 'read -r line < /proc/self/stat; echo "$line"'],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    });
    const fields = probe === null ? [] : new TextDecoder().decode(probe.stdout).split(" ");
    const session = probe?.code === 0 && fields.length >= 6 && fields[0] === fields[5];
    const files = await written(`${dir}/files`, filesHelperElf());
    // Its own folder, listed: "d\n" then an entry for each helper.
    const listing = await firstRun(files, {
      args: [dir, "read", ".", "0", "8"],
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    });
    const filesRuns = listing?.code === 0 &&
      new TextDecoder().decode(listing.stdout).startsWith("d\n");
    if (!session && !filesRuns) {
      await remove();
      return null;
    }
    return { path: session ? path : null, files: filesRuns ? files : null, remove };
  } catch {
    await remove();
    return null;
  }
}

/**
 * The first run of a helper just written, or null if it cannot start. A spawn elsewhere in this
 * process may hold the file's write descriptor between its fork and its exec, and the kernel then
 * refuses to run the file (ETXTBSY, "Text file busy"): so a failed start is tried again, a few
 * times, a moment apart.
 */
async function firstRun(
  path: string,
  options: Deno.CommandOptions,
): Promise<Deno.CommandOutput | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await new Deno.Command(path, options).output();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20 * (attempt + 1)));
    }
  }
  return null;
}

/** Writes an executable 0500 and returns its path. */
async function written(path: string, bytes: Uint8Array): Promise<string> {
  await Deno.writeFile(path, bytes, { mode: 0o500 });
  await Deno.chmod(path, 0o500);
  return path;
}

/**
 * Removes the helper folders in `tmp` that belong to this user and whose guest has gone: no one
 * holds the folder's lock (and, for one still by its first name, it is older than a guest needs
 * to take the lock).
 */
async function removeLeftHelpers(tmp: string): Promise<void> {
  const uid = Deno.uid();
  try {
    for await (const entry of Deno.readDir(tmp)) {
      const fresh = NEW_HELPER_DIR.test(entry.name);
      if (!(fresh || HELPER_DIR.test(entry.name)) || !entry.isDirectory) continue;
      const path = `${tmp}/${entry.name}`;
      const info = await Deno.lstat(path).catch(() => null);
      if (info === null || !info.isDirectory || info.uid !== uid) continue;
      const age = Date.now() - (info.mtime?.getTime() ?? Date.now());
      if (fresh && age < SWEEP_NEW_AFTER_MS) continue;
      const folder = await Deno.open(path, { read: true }).catch(() => null);
      if (folder === null) continue;
      try {
        if (await folder.tryLock(true)) await Deno.remove(path, { recursive: true });
      } catch {
        // Gone meanwhile, or not ours to remove: left.
      } finally {
        folder.close();
      }
    }
  } catch {
    // An unreadable temporary folder: nothing is swept, the helper still installs.
  }
}

const ERRNO_TEXT: Record<number, string> = {
  1: "could not start a new session",
  2: "no such program",
  7: "argument list too long",
  8: "not an executable (exec format error)",
  13: "permission denied",
  20: "a part of its path is not a directory",
  21: "is a directory",
  26: "text file busy",
  36: "file name too long",
  40: "too many levels of symbolic links",
};

/**
 * If stderr is exactly the helper's failure line (and the status its 127), the reason the
 * program did not start; otherwise undefined: the program itself ran.
 */
export function helperFailure(code: number, stderr: string): string | undefined {
  const match = /^gurt-setsid: errno ([0-9]{3})\n$/.exec(stderr);
  if (code !== 127 || match === null) return undefined;
  const errno = Number(match[1]);
  return ERRNO_TEXT[errno] ?? `error ${errno} from execve`;
}
