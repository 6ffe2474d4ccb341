/**
 * A task's workdirs on the host: each checked (a folder of the grant path's owner, not root's, no
 * link on its way), id-mapped at tasks/<id>/workdirs/<n> (idmap.ts), listed, and turned into the
 * binds its sandbox lays at the folder's own path: the folder, then read-only over it the protected
 * paths and the covered `.env*` files (protected_paths.ts). At the task's end: listed again, the
 * placeholders the sandbox made removed, unmounted, and the writes summarized (listing.ts).
 */
import { type CoverBind, coverBinds, protectedChanges } from "./protected_paths.ts";
import {
  changedPaths,
  listFolder,
  type Listing,
  summarizeWrites,
  type WriteSummary,
} from "./listing.ts";
import { IdmapError, idmapMount, installIdmapHelper } from "./idmap.ts";

/** A workdir as task.json keeps it. */
export interface WorkdirRecord {
  path: string;
  readOnly: boolean;
  /** The mode of the grant that allowed it: auto, or ask (approved by the owner). */
  mode: "auto" | "ask";
  grant: string;
  includeEnvFiles: boolean;
}

/** One workdir mounted for a live task. */
export interface MountedWorkdir {
  record: WorkdirRecord;
  staging: string;
  covers: CoverBind[];
  start: Listing;
}

/** A bind the task's sandbox makes, in order: `source` on the host at `dest` inside. */
export interface WorkdirBind {
  source: string;
  dest: string;
  writable: boolean;
}

const REFUSED = "see runbook.md#workdir-refused";

/** Mounts workdir `index` of task `dir` for its user; throws a sentence when it may not be. */
export async function mountWorkdir(
  record: WorkdirRecord,
  places: {
    dir: string;
    index: number;
    grantPath: string;
    helper: string;
    extra: readonly string[];
  },
  user: { uid: number; gid: number },
): Promise<MountedWorkdir> {
  const base = `${places.dir}/workdirs`;
  await placeholders(base);
  const staging = `${base}/${places.index}`;
  await Deno.mkdir(staging, { recursive: true, mode: 0o700 });
  // What a killed core left mounted there (the staging folder is then on another device).
  if (Deno.statSync(staging).dev !== Deno.statSync(base).dev) await unmount(staging);
  await installIdmapHelper(places.helper);
  // The helper mounts the folder, waits while it is listed through the mount, then lays the covers
  // the listing calls for over it (one process; bubblewrap binds the mount with them, recursively).
  let start: Listing = { entries: new Map(), truncated: false };
  let covers: CoverBind[] = [];
  try {
    await idmapMount(
      places.helper,
      {
        source: record.path,
        target: staging,
        grantPath: places.grantPath,
        empty: { file: `${base}/empty`, dir: `${base}/empty.d` },
      },
      { task: user, readOnly: record.readOnly },
      () => {
        start = listFolder(staging);
        covers = coverBinds(start, {
          readOnly: record.readOnly,
          includeEnvFiles: record.includeEnvFiles,
          extra: places.extra,
        });
        return covers.map((cover) => `${coverKind(cover)} ${cover.rel}`);
      },
    );
  } catch (error) {
    await unmount(staging);
    if (!(error instanceof IdmapError)) throw error;
    throw new Error(
      `the workdir ${record.path} ${refusalText(error, places.grantPath)}; ${REFUSED}`,
    );
  }
  return { record, staging, covers, start };
}

/** The helper's letter for a cover (idmap_helper.c). */
function coverKind(cover: CoverBind): string {
  if (cover.from === "folder") return "f";
  if (cover.from === "pin") return "p";
  if (cover.from === "emptyFile") return cover.made ? "F" : "e";
  return cover.made ? "D" : "E";
}

/** The helper's refusal in words. */
function refusalText(error: IdmapError, grantPath: string): string {
  const numbers = [...error.said.matchAll(/([0-9]+)\n?/g)].map((match) => match[1]);
  switch (error.refusal) {
    case "linked":
      return "has a symbolic link on its way (a workdir, and its grant's path, are named by their real paths)";
    case "not_owner": {
      const [owner, found] = [numbers[0], numbers.at(-1)];
      return `belongs to uid ${found}, not to uid ${owner} who owns its grant's path ${grantPath}`;
    }
    case "root_grant":
      return `has a grant path (${grantPath}) that belongs to root (or is not a folder), and no task writes as root`;
    default:
      return `could not be mounted for the task (${error.said})`;
  }
}

/** The empty read-only file and folder laid over covered and missing paths (root's), once. */
async function placeholders(base: string): Promise<void> {
  const there = (path: string) => Deno.lstat(path).then(() => true, () => false);
  if (await there(`${base}/empty.d`)) return;
  await Deno.mkdir(base, { recursive: true, mode: 0o711 });
  await Deno.chmod(base, 0o711);
  await Deno.writeFile(`${base}/empty`, new Uint8Array(), { mode: 0o444 });
  await Deno.chmod(`${base}/empty`, 0o444);
  await Deno.mkdir(`${base}/empty.d`, { recursive: true, mode: 0o555 });
  await Deno.chmod(`${base}/empty.d`, 0o555);
}

/** The sandbox's binds for a task's workdirs, its working directory, and whether any is writable. */
export function workdirBinds(
  mounted: readonly MountedWorkdir[],
): { binds: WorkdirBind[]; cwd: string | null; writable: boolean } {
  const binds: WorkdirBind[] = [];
  for (const one of mounted) {
    const path = one.record.path;
    // Its covers are mounts over the staging mount: bubblewrap's bind is recursive.
    binds.push({ source: one.staging, dest: path, writable: !one.record.readOnly });
  }
  return {
    binds,
    cwd: mounted[0]?.record.path ?? null,
    writable: mounted.some((one) => !one.record.readOnly),
  };
}

/**
 * Ends a workdir once its sandbox is gone: lists it, removes the empty placeholders the sandbox
 * made for missing protected paths (and the folders it made for them), unmounts it, and returns the
 * summary of the task's writes.
 */
export async function finishWorkdir(
  one: MountedWorkdir,
): Promise<WriteSummary & { protectedChanges: { breached: string[]; nested: string[] } }> {
  const end = listFolder(one.staging);
  // Under a cover the end's listing sees the cover, which nothing could change: the start's holds.
  for (const cover of one.covers.filter((cover) => cover.from !== "pin")) {
    const under = (path: string) => path === cover.rel || path.startsWith(`${cover.rel}/`);
    for (const path of [...end.entries.keys()]) if (under(path)) end.entries.delete(path);
    if (cover.made) continue;
    for (const [path, entry] of one.start.entries) if (under(path)) end.entries.set(path, entry);
  }
  // The covers come off (deepest first), then the places made for them, then the mount.
  const deepest = [...one.covers].sort((a, b) => depth(b.rel) - depth(a.rel));
  if (deepest.length > 0) {
    await runUmount(deepest.map((cover) => `${one.staging}/${cover.rel}`));
  }
  const made = one.covers.filter((cover) => cover.made).map((cover) => cover.rel);
  const parents = new Set<string>();
  for (const rel of made) {
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      const above = parts.slice(0, i).join("/");
      if (!one.start.entries.has(above)) parents.add(above);
    }
  }
  for (const rel of [...made, ...parents].sort((a, b) => depth(b) - depth(a))) {
    const path = `${one.staging}/${rel}`;
    const info = await Deno.lstat(path).catch(() => null);
    if (info === null || info.isSymlink) continue;
    const empty = info.isFile
      ? info.size === 0
      : info.isDirectory && [...Deno.readDirSync(path)].length === 0;
    if (empty && await Deno.remove(path).then(() => true, () => false)) end.entries.delete(rel);
  }
  await unmount(one.staging);
  await Deno.remove(one.staging).catch(() => {});
  const flagged = protectedChanges(changedPaths(one.start, end), one.covers);
  return { ...summarizeWrites(one.record.path, one.start, end), protectedChanges: flagged };
}

function depth(rel: string): number {
  return rel.split("/").length;
}

/** umount(8) of `paths`, whether it succeeded. */
function runUmount(args: string[]): Promise<boolean> {
  return new Deno.Command("umount", { args, stdin: "null", stdout: "null", stderr: "null" })
    .output().then((out) => out.success, () => false);
}

/** Unmounts a staging mount with what is mounted over it, lazily where it is busy. */
async function unmount(path: string): Promise<void> {
  if (!(await runUmount(["-R", path]))) await runUmount(["-R", "-l", path]);
}
