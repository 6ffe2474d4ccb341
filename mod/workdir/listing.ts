/**
 * A workdir's listing, taken through its staging mount at the task's start and at its end, and the
 * summary of the task's writes that the journal records (files added, changed and removed, with
 * their sizes). Links are listed as links and never followed; a listing stops at MAX_ENTRIES and
 * says so.
 */

/** What a listing keeps of one entry. */
export interface ListedEntry {
  kind: "file" | "dir" | "link" | "other";
  size: number;
  /** Modification time in ms, and the inode's change time: a rewrite of equal size still shows. */
  mtime: number;
  ctime: number;
}

/** A folder's entries by their path relative to its top. */
export interface Listing {
  entries: Map<string, ListedEntry>;
  /** Whether the listing stopped at MAX_ENTRIES. */
  truncated: boolean;
}

/** The most entries a listing holds. */
export const MAX_ENTRIES = 50_000;

/** The most paths of each kind the journal's summary names (their counts are always whole). */
export const MAX_NAMED = 100;

/** Lists `top` (a staging mount) without following any link. */
export function listFolder(top: string, max: number = MAX_ENTRIES): Listing {
  const entries = new Map<string, ListedEntry>();
  const folders = [""];
  let truncated = false;
  while (folders.length > 0 && !truncated) {
    const rel = folders.pop()!;
    let names: Deno.DirEntry[];
    try {
      names = [...Deno.readDirSync(rel === "" ? top : `${top}/${rel}`)];
    } catch {
      continue; // a folder the owner closed to everyone: not listed
    }
    for (const item of names) {
      if (entries.size >= max) {
        truncated = true;
        break;
      }
      const path = rel === "" ? item.name : `${rel}/${item.name}`;
      let info: Deno.FileInfo;
      try {
        info = Deno.lstatSync(`${top}/${path}`);
      } catch {
        continue;
      }
      const kind = info.isSymlink
        ? "link"
        : info.isFile
        ? "file"
        : info.isDirectory
        ? "dir"
        : "other";
      entries.set(path, {
        kind,
        size: kind === "file" ? info.size : 0,
        mtime: info.mtime?.getTime() ?? 0,
        ctime: info.ctime?.getTime() ?? 0,
      });
      if (kind === "dir") folders.push(path);
    }
  }
  return { entries, truncated };
}

/** One path of a summary, with its size before and after (null where it did not exist). */
export interface WriteEntry {
  path: string;
  before: number | null;
  after: number | null;
}

/** The journal's summary of a task's writes in one workdir. */
export interface WriteSummary {
  workdir: string;
  added: number;
  changed: number;
  removed: number;
  /** Bytes of the files added and changed, as they are at the end. */
  bytesWritten: number;
  /** The first MAX_NAMED of each, in path order. */
  files: { added: WriteEntry[]; changed: WriteEntry[]; removed: WriteEntry[] };
  /** Whether either listing stopped at MAX_ENTRIES (the counts are then of what was listed). */
  truncated: boolean;
}

/** What changed between the start's listing and the end's: files and links, not folders. */
export function summarizeWrites(
  workdir: string,
  before: Listing,
  after: Listing,
): WriteSummary {
  const added: WriteEntry[] = [];
  const changed: WriteEntry[] = [];
  const removed: WriteEntry[] = [];
  for (const [path, now] of after.entries) {
    if (now.kind === "dir") continue;
    const was = before.entries.get(path);
    if (was === undefined || was.kind === "dir") {
      added.push({ path, before: null, after: now.size });
    } else if (
      was.kind !== now.kind || was.size !== now.size || was.mtime !== now.mtime ||
      was.ctime !== now.ctime
    ) {
      changed.push({ path, before: was.size, after: now.size });
    }
  }
  for (const [path, was] of before.entries) {
    if (was.kind === "dir") continue;
    const now = after.entries.get(path);
    if (now === undefined || now.kind === "dir") {
      removed.push({ path, before: was.size, after: null });
    }
  }
  const order = (a: WriteEntry, b: WriteEntry) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const bytesWritten = [...added, ...changed].reduce((sum, entry) => sum + (entry.after ?? 0), 0);
  return {
    workdir,
    added: added.length,
    changed: changed.length,
    removed: removed.length,
    bytesWritten,
    files: {
      added: added.sort(order).slice(0, MAX_NAMED),
      changed: changed.sort(order).slice(0, MAX_NAMED),
      removed: removed.sort(order).slice(0, MAX_NAMED),
    },
    truncated: before.truncated || after.truncated,
  };
}

/** Every path (file, link or folder) added, changed or removed between two listings. */
export function changedPaths(before: Listing, after: Listing): string[] {
  const out: string[] = [];
  for (const [path, now] of after.entries) {
    const was = before.entries.get(path);
    if (
      was === undefined || was.kind !== now.kind ||
      (now.kind !== "dir" &&
        (was.size !== now.size || was.mtime !== now.mtime || was.ctime !== now.ctime))
    ) {
      out.push(path);
    }
  }
  for (const path of before.entries.keys()) if (!after.entries.has(path)) out.push(path);
  return out.sort();
}
