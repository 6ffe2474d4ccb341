/**
 * What a task may not change in a writable workdir, and what it does not see there: the mandatory
 * read-only paths (at the folder's top, whatever the grant), the owner's `[tasks] protected_paths`,
 * and the `.env*` files a grant without `include_env_files` leaves covered. Pure: from the listing
 * taken at the task's start (listing.ts) to the list of binds that lay them over the folder.
 */
import type { Listing } from "./listing.ts";

/**
 * The mandatory read-only paths, relative to a workdir's top, and what each is made as when it is
 * missing (an empty read-only folder or file, so the task cannot make it either): git's hooks and
 * configuration, the shells' rc files, and the folders and files coding agents and editors read
 * their settings, tools and hooks from.
 */
export const PROTECTED_PATHS: readonly { path: string; kind: "dir" | "file" }[] = [
  { path: ".git/hooks", kind: "dir" },
  { path: ".git/config", kind: "file" },
  { path: ".gitmodules", kind: "file" },
  { path: ".gitconfig", kind: "file" },
  { path: ".bashrc", kind: "file" },
  { path: ".bash_profile", kind: "file" },
  { path: ".bash_login", kind: "file" },
  { path: ".bash_logout", kind: "file" },
  { path: ".profile", kind: "file" },
  { path: ".zshrc", kind: "file" },
  { path: ".zshenv", kind: "file" },
  { path: ".zprofile", kind: "file" },
  { path: ".zlogin", kind: "file" },
  { path: ".mcp.json", kind: "file" },
  { path: ".vscode", kind: "dir" },
  { path: ".idea", kind: "dir" },
  { path: ".claude", kind: "dir" },
  { path: ".codex", kind: "dir" },
  { path: ".factory", kind: "dir" },
  { path: ".opencode", kind: "dir" },
  { path: ".envrc", kind: "file" },
];

/** Why a `[tasks] protected_paths` entry is not a path relative to a workdir's top, else null. */
export function protectedPathProblem(path: string): string | null {
  if (path === "" || path.startsWith("/")) return "must be relative to the workdir's top";
  const parts = path.replace(/\/$/, "").split("/");
  if (parts.some((part) => part === "" || part === "." || part === "..")) {
    return "may not have an empty, . or .. component";
  }
  return path.includes("\0") ? "contains a NUL character" : null;
}

/** One bind laid over the workdir: `from` (a path under the staging mount, or a placeholder). */
export interface CoverBind {
  /** Relative to the workdir's top. */
  rel: string;
  /**
   * "folder": the staging mount's own entry, read-only; "emptyFile"/"emptyDir": a placeholder;
   * "pin": the folder above a protected path, bound writable over itself so that it cannot be
   * renamed or removed (a mount point), which would put a protected path's place out of reach.
   */
  from: "folder" | "emptyFile" | "emptyDir" | "pin";
  /** Whether the entry was missing at the start: the bind's mountpoint is removed at the end. */
  made: boolean;
  why: "protected" | "env" | "pin";
}

/** The binds over a workdir, parents before children; throws where a protected path is a link. */
export function coverBinds(
  listing: Listing,
  options: { readOnly: boolean; includeEnvFiles: boolean; extra: readonly string[] },
): CoverBind[] {
  const out = new Map<string, CoverBind>();
  const envName = (rel: string) => rel.slice(rel.lastIndexOf("/") + 1).startsWith(".env");
  if (!options.includeEnvFiles) {
    for (const [rel, entry] of listing.entries) {
      if (!envName(rel) || (entry.kind !== "file" && entry.kind !== "dir")) continue;
      // One inside a covered folder is covered with it.
      if ([...out.keys()].some((done) => rel.startsWith(`${done}/`))) continue;
      const from = entry.kind === "dir" ? "emptyDir" : "emptyFile";
      out.set(rel, { rel, from, made: false, why: "env" });
    }
  }
  if (!options.readOnly) {
    const wanted = [
      ...PROTECTED_PATHS,
      ...options.extra.map((path) => ({
        path: path.replace(/\/$/, ""),
        kind: path.endsWith("/") ? "dir" as const : "file" as const,
      })),
    ];
    for (const { path, kind } of wanted) {
      if (out.has(path)) continue;
      const parts = path.split("/");
      let under = true;
      for (let i = 1; i < parts.length; i++) {
        const above = listing.entries.get(parts.slice(0, i).join("/"));
        if (above === undefined || above.kind === "dir") continue;
        if (above.kind === "link") throw new LinkedProtectedPath(path);
        under = false; // under a file: nothing can be made there
      }
      if (!under) continue;
      const entry = listing.entries.get(path);
      if (entry?.kind === "link") throw new LinkedProtectedPath(path);
      for (let i = 1; i < parts.length; i++) {
        const above = parts.slice(0, i).join("/");
        if (out.has(above)) continue;
        const made = listing.entries.get(above) === undefined;
        out.set(above, { rel: above, from: "pin", made, why: "pin" });
      }
      if (entry === undefined) {
        out.set(path, {
          rel: path,
          from: kind === "dir" ? "emptyDir" : "emptyFile",
          made: true,
          why: "protected",
        });
      } else if (entry.kind === "dir" || entry.kind === "file") {
        out.set(path, { rel: path, from: "folder", made: false, why: "protected" });
      }
    }
  }
  return [...out.values()].sort((a, b) => depth(a.rel) - depth(b.rel) || (a.rel < b.rel ? -1 : 1));
}

function depth(rel: string): number {
  return rel.split("/").length;
}

/** A protected path of the folder is a symbolic link: the task is not started. */
export class LinkedProtectedPath extends Error {
  constructor(readonly rel: string) {
    super(
      `the workdir's protected path ${rel} is a symbolic link (or lies under one), which the sandbox cannot make read-only in place; see runbook.md#workdir-refused`,
    );
  }
}

/**
 * What the end-of-task comparison says of the protected paths (the core cannot see a write the
 * kernel refused: the read-only mount answers EROFS and leaves no trace): `breached`, a change
 * under a protected path that was mounted read-only, which the mount should have made impossible;
 * `nested`, a change under a protected name deeper in the folder (`vendor/x/.git/hooks/…`,
 * `sub/.vscode/…`), which only the folder's top is protected against and the owner should review.
 */
export function protectedChanges(
  changed: readonly string[],
  covers: readonly CoverBind[],
): { breached: string[]; nested: string[] } {
  const guarded = covers.filter((cover) => cover.why === "protected").map((cover) => cover.rel);
  const under = (path: string, rel: string) => path === rel || path.startsWith(`${rel}/`);
  const breached = changed.filter((path) => guarded.some((rel) => under(path, rel)));
  const names = PROTECTED_PATHS.map((entry) => entry.path);
  const nested = changed.filter((path) =>
    !breached.includes(path) &&
    names.some((name) => {
      const at = path.indexOf(`/${name}`);
      if (at < 0) return false;
      const rest = path.slice(at + 1);
      return under(rest, name);
    })
  );
  return { breached, nested };
}
