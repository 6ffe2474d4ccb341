/**
 * A task's workdirs (`gurt task start --workdir PATH[:ro]`): the owner's folders, decided by the
 * `task.workdir` grants, id-mapped into the task's sandbox at their own paths with their protected
 * paths read-only and their `.env*` files covered, and the summary of what the task wrote there.
 */
export {
  decideWorkdir,
  overlaps,
  parseWorkdir,
  type WorkdirRequest,
  type WorkdirVerdict,
} from "./workdir_policy.ts";
export {
  type CoverBind,
  coverBinds,
  LinkedProtectedPath,
  PROTECTED_PATHS,
  protectedChanges,
  protectedPathProblem,
} from "./protected_paths.ts";
export {
  changedPaths,
  type ListedEntry,
  listFolder,
  type Listing,
  MAX_ENTRIES,
  summarizeWrites,
  type WriteEntry,
  type WriteSummary,
} from "./listing.ts";
export { idmapHelperElf } from "./idmap.ts";
export {
  finishWorkdir,
  type MountedWorkdir,
  mountWorkdir,
  type WorkdirBind,
  workdirBinds,
  type WorkdirRecord,
} from "./workdir_mount.ts";
