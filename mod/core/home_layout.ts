/**
 * The box home's folders (README.md#the-box-home): made with their modes on the first start, and
 * checked at every start, since the owner may have made one by hand before. A folder or file of the
 * core's that others may read is tightened, and said; one that others may write, that another user
 * owns, or that is a link or the wrong kind stops the start: what is in it may not be what the
 * owner put there, so the owner looks first (see runbook.md#home-permissions).
 */

import { firstClosedFolder, unreachableText } from "./home_reach.ts";
import { type GuardedServer, type GuardOptions, serveGuarded } from "../net/mod.ts";

/** A folder the core keeps under the home, made in this order, and the mode it keeps it at. */
const GUARDED: readonly { name: string; mode: number }[] = [
  { name: "grants", mode: 0o700 },
  { name: "audit", mode: 0o700 },
  { name: "broker", mode: 0o700 },
  { name: "broker/sessions", mode: 0o700 },
  // Task users pass through tasks/ to their own folder and socket, without listing it.
  { name: "tasks", mode: 0o711 },
  { name: "run", mode: 0o700 },
  { name: "run/owner-broker", mode: 0o700 },
  { name: "portal", mode: 0o700 },
];

/** Files the owner writes by hand at the top of the home: no one else may change them. */
const OWNER_FILES: readonly string[] = ["gurt.toml", "vault-policy.json"];

/** The names of the audit folder's files the core writes: the log's days and its lock. */
const AUDIT_FILE = /^(\d{4}-\d{2}-\d{2}\.jsonl|\.lock)$/;

const POINTER = "see runbook.md#home-permissions";

/** No user's uid or gid: what a task's user is to folders it does not own. */
const ANY_OTHER = { uid: -1, gid: -1 };

/**
 * Makes every folder the core needs and checks those found: the home passable by task users when
 * `taskUsers`, each folder at its mode, the audit files 0600. Returns a sentence for each mode it
 * changed; throws, having changed nothing more, at the first path it will not work with.
 */
export async function ensureHomeLayout(
  home: string,
  options: {
    taskUsers?: boolean;
    /**
     * "audit": only the home, grants/ and audit/ with its files, all a core needs to take the audit
     * lock; "rest": the folders after those, for the core that holds the lock, so a second core
     * that finds the lock taken has made or changed none of the running core's folders. Both by
     * default.
     */
    part?: "audit" | "rest";
  } = {},
): Promise<string[]> {
  const me = Deno.uid() ?? 0;
  const notices: string[] = [];
  await Deno.mkdir(home, { recursive: true, mode: 0o711 });
  const found = await Deno.stat(home);
  if (!found.isDirectory) throw new Error(`the box home ${home} is not a folder; ${POINTER}`);
  checkOwnerAndWriters(home, found, [me]);
  // Others may pass through the home (each task's user to its own folder), never list or write it.
  const homeMode = (found.mode! & 0o711) | (options.taskUsers === true ? 0o001 : 0);
  await setMode(home, found.mode!, homeMode, notices);
  const closed = options.taskUsers === true && options.part !== "rest"
    ? await firstClosedFolder(home, ANY_OTHER)
    : null;
  if (closed !== null) {
    // Not a refusal: tasks whose worker is none still work. Said now, not at each task's failure.
    notices.push(
      `gurt serve: no task's worker will start: ${
        unreachableText(`the task users (box-<id>) cannot reach the box home ${home}`, closed)
      }`,
    );
  }
  for (const file of OWNER_FILES) {
    // The file as the core reads it: through a link, if the owner keeps it elsewhere.
    const info = await Deno.stat(`${home}/${file}`).catch(notFoundIsNull);
    if (info === null) continue;
    if (!info.isFile) throw new Error(`${home}/${file} is not a regular file; ${POINTER}`);
    checkOwnerAndWriters(`${home}/${file}`, info, [me, 0]);
  }
  const audit = GUARDED.findIndex((folder) => folder.name === "audit");
  const folders = options.part === "audit"
    ? GUARDED.slice(0, audit + 1)
    : options.part === "rest"
    ? GUARDED.slice(audit + 1)
    : GUARDED;
  for (const folder of folders) {
    const path = `${home}/${folder.name}`;
    const info = await Deno.lstat(path).catch(notFoundIsNull);
    if (info === null) {
      await Deno.mkdir(path, { mode: folder.mode });
      await setMode(path, null, folder.mode, notices);
      continue;
    }
    if (info.isSymlink) {
      throw new Error(
        `${path} is a link; the core keeps this folder only as a real folder of the box home, so ` +
          `put the folder itself there; ${POINTER}`,
      );
    }
    if (!info.isDirectory) {
      throw new Error(
        `${path} is not a folder; move it away so that gurt serve can make the folder; ${POINTER}`,
      );
    }
    checkOwnerAndWriters(path, info, [me]);
    await setMode(path, info.mode!, folder.mode, notices);
  }
  if (options.part !== "rest") await checkAuditFiles(`${home}/audit`, me, notices);
  return notices;
}

/** The audit log's files: the core's own, changed by no one else, read by no one else. */
async function checkAuditFiles(dir: string, me: number, notices: string[]): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    if (!AUDIT_FILE.test(entry.name)) continue;
    const path = `${dir}/${entry.name}`;
    const info = await Deno.lstat(path);
    if (!info.isFile) {
      throw new Error(`${path} is not a regular file (a link, a folder or a device); ${POINTER}`);
    }
    checkOwnerAndWriters(path, info, [me]);
    await setMode(path, info.mode!, 0o600, notices);
  }
}

/** Throws unless `path` belongs to one of `owners` and neither its group nor others may write it. */
function checkOwnerAndWriters(path: string, info: Deno.FileInfo, owners: number[]): void {
  if (!owners.includes(info.uid!)) {
    throw new Error(
      `${path} is owned by uid ${info.uid}, not by uid ${owners[0]} that gurt serve runs as, so ` +
        `another user could change what the core keeps there; once you have checked what is in ` +
        `it, run chown -R ${owners[0]} ${path}; ${POINTER}`,
    );
  }
  if ((info.mode! & 0o022) !== 0) {
    throw new Error(
      `${path} has mode ${octal(info.mode!)}, so other users could have changed what is in it; ` +
        `check it, then run chmod go-w ${path}; ${POINTER}`,
    );
  }
}

/** Sets `path` to `mode`; a path that was found (`was` not null) at another mode is a notice. */
async function setMode(
  path: string,
  was: number | null,
  mode: number,
  notices: string[],
): Promise<void> {
  if (was !== null && (was & 0o7777) === mode) return;
  try {
    await Deno.chmod(path, mode);
  } catch (error) {
    throw new Error(
      `cannot set ${path} to mode ${octal(mode)}: ${(error as Error).message}; ${POINTER}`,
    );
  }
  if (was !== null) {
    notices.push(`gurt serve: ${path} had mode ${octal(was)} and is now ${octal(mode)}`);
  }
}

function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, "0")}`;
}

function notFoundIsNull(error: unknown): null {
  if (error instanceof Deno.errors.NotFound) return null;
  throw error;
}

/** Removes a socket file left by a core that is gone. Call only while holding the audit lock. */
export async function removeStaleSocket(path: string): Promise<void> {
  try {
    const info = await Deno.lstat(path);
    if (!info.isSocket) {
      throw new Error(`${path} exists and is not a socket; see runbook.md#home-unusable`);
    }
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * Serves `handler` on a Unix socket at `path`, mode 0600, bound inside a private folder, held by
 * the guarded server: at most `guard.maxConnections` open at once, each head within its timeout.
 */
export async function serveSocket(
  path: string,
  handler: (request: Request) => Response | Promise<Response>,
  guard: GuardOptions = { name: path },
): Promise<GuardedServer> {
  await removeStaleSocket(path);
  const server = serveGuarded({ path }, handler, guard);
  await Deno.chmod(path, 0o600);
  return server;
}
