/**
 * The workspace jail. A path is resolved one component at a time from the workspace's real root,
 * following symbolic links by hand, so that the path an operation then uses holds no link at all
 * and lies inside the workspace. Every way out (`..`, an absolute path elsewhere, a link that
 * points outside) is 400 path_escape. Resolution happens on every request, at the moment of use.
 */
import { GuestError } from "./errors.ts";

/** The longest path the jail accepts, in bytes of UTF-16 code units. */
export const MAX_PATH_LENGTH = 4096;
const MAX_LINK_HOPS = 40;

/** A path resolved inside the jail: `path` has no symbolic link in it; it may not exist yet. */
export interface Resolved {
  path: string;
  exists: boolean;
  /** Whether `path` is the workspace root itself. */
  isRoot: boolean;
}

/** The workspace jail rooted at a real (symlink-free) absolute directory. */
export class Jail {
  constructor(readonly root: string) {}

  /**
   * Resolves `input` (relative to the root, or absolute under it). `followFinal: false` keeps a
   * final symbolic link as itself (delete and move act on the link, never on what it names).
   */
  async resolve(input: string, options: { followFinal: boolean }): Promise<Resolved> {
    let pending = this.components(input, input);
    let current = this.root;
    let hops = 0;
    while (pending.length > 0) {
      const name = pending.shift() as string;
      const candidate = `${current === "/" ? "" : current}/${name}`;
      let info: Deno.FileInfo;
      try {
        info = await Deno.lstat(candidate);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) {
          const rest = [name, ...pending].join("/");
          return {
            path: `${current === "/" ? "" : current}/${rest}`,
            exists: false,
            isRoot: false,
          };
        }
        throw ioError(input, error);
      }
      const last = pending.length === 0;
      if (info.isSymlink && (!last || options.followFinal)) {
        if (++hops > MAX_LINK_HOPS) {
          throw new GuestError(
            "invalid_request",
            400,
            `the path ${JSON.stringify(input)} goes through more than ${MAX_LINK_HOPS} links`,
          );
        }
        const target = await Deno.readLink(candidate);
        const absolute = target.startsWith("/") ? target : `${current}/${target}`;
        pending = [...this.components(absolute, input), ...pending];
        current = this.root;
        continue;
      }
      if (!last && !info.isDirectory) {
        throw new GuestError(
          "invalid_request",
          400,
          `the path ${JSON.stringify(input)} goes through ${candidate}, which is not a directory`,
        );
      }
      current = candidate;
    }
    return { path: current, exists: true, isRoot: current === this.root };
  }

  /** Like resolve, following every link, and 404 not_found if the path does not exist. */
  async existing(input: string): Promise<string> {
    const resolved = await this.resolve(input, { followFinal: true });
    if (!resolved.exists) {
      throw new GuestError("not_found", 404, `${JSON.stringify(input)} does not exist`);
    }
    return resolved.path;
  }

  /** The path's components below the root, or path_escape if it leaves the root. */
  private components(path: string, input: string): string[] {
    checkShape(input);
    let rest: string;
    if (path.startsWith("/")) {
      if (path === this.root || path === `${this.root}/`) return [];
      const prefix = this.root === "/" ? "/" : `${this.root}/`;
      // Normalise first so that /workspace/../etc is caught by the walk below.
      if (!path.startsWith(prefix)) throw escape(input, this.root);
      rest = path.slice(prefix.length);
    } else {
      rest = path;
    }
    const out: string[] = [];
    for (const part of rest.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (out.length === 0) throw escape(input, this.root);
        out.pop();
      } else {
        out.push(part);
      }
    }
    return out;
  }
}

/** Rejects paths no file system operation should see: NUL bytes and absurd lengths. */
function checkShape(input: string): void {
  if (input.includes("\0")) {
    throw new GuestError("invalid_request", 400, "a path may not contain a NUL byte");
  }
  if (input.length > MAX_PATH_LENGTH) {
    throw new GuestError(
      "invalid_request",
      400,
      `a path may be at most ${MAX_PATH_LENGTH} characters long, got ${input.length}`,
    );
  }
}

function escape(input: string, root: string): GuestError {
  return new GuestError(
    "path_escape",
    400,
    `the path ${JSON.stringify(input)} leads outside the workspace ${root}`,
  );
}

/** An unexpected file system error as the guest's io_error (or invalid_request for bad names). */
export function ioError(input: string, error: unknown): GuestError {
  if (error instanceof GuestError) return error;
  if (error instanceof Deno.errors.NotFound) {
    return new GuestError("not_found", 404, `${JSON.stringify(input)} does not exist`);
  }
  if (error instanceof Deno.errors.AlreadyExists) {
    return new GuestError("invalid_request", 409, `${JSON.stringify(input)} already exists`);
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/name too long|ENAMETOOLONG/i.test(message)) {
    return new GuestError("invalid_request", 400, `the path ${JSON.stringify(input)} is too long`);
  }
  return new GuestError("io_error", 500, `cannot act on ${JSON.stringify(input)}: ${message}`);
}
