/**
 * The file operations. Each resolves its path with the jail (links that stay inside followed, any
 * way out 400 path_escape), then has the files helper act on the link-free result beneath the
 * workspace's root (files_helper.ts): what the jail checked is what is opened, listed, written,
 * deleted or moved, whatever is swapped in meanwhile. Only regular files are read or written, and
 * nothing waits on a FIFO, a socket or a device.
 */
import { GuestError } from "./errors.ts";
import { type FilesHelper, HelperErrno } from "./files_helper.ts";
import { ioError, type Jail } from "./jail.ts";

/** The limits the file operations enforce. */
export interface FileLimits {
  maxFileBytes: number;
  maxDirEntries: number;
}

/** The workspace as the file operations reach it: its jail, and the helper (null: none runs). */
export interface Workspace {
  jail: Jail;
  helper: FilesHelper | null;
}

/** What GET /v1/files answers. */
export type ReadAnswer =
  | { kind: "file"; path: string; size: number; encoding: "utf8" | "base64"; content: string }
  | {
    kind: "directory";
    path: string;
    entries: { name: string; kind: "file" | "directory" | "symlink" | "other"; size: number }[];
    truncated: boolean;
  };

/** Reads a file (utf8 unless asked or not valid UTF-8, then base64) or lists a directory. */
export async function readPath(
  workspace: Workspace,
  options: FileLimits & { path: string; encoding: "utf8" | "base64" },
): Promise<ReadAnswer> {
  const input = options.path;
  const helper = helperOf(workspace);
  const path = await workspace.jail.existing(input);
  const found = await act(input, () =>
    helper.read(relative(workspace.jail, path), {
      maxBytes: options.maxFileBytes,
      maxEntries: options.maxDirEntries,
    }));
  if (found.kind === "directory") {
    const entries = found.entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    return { kind: "directory", path, entries, truncated: found.truncated };
  }
  if (found.kind !== "file") throw notRegular(input);
  if (found.bytes === null) {
    throw new GuestError(
      "payload_too_large",
      413,
      `${JSON.stringify(input)} is ${found.size} bytes, above BOX_MAX_FILE_BYTES ` +
        `(${options.maxFileBytes}); fetch it with GET /v1/files/raw`,
    );
  }
  const bytes = found.bytes;
  if (options.encoding === "utf8") {
    try {
      const content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      return { kind: "file", path, size: bytes.byteLength, encoding: "utf8", content };
    } catch {
      // Not UTF-8: fall through to base64, as the seed says.
    }
  }
  return { kind: "file", path, size: bytes.byteLength, encoding: "base64", content: base64(bytes) };
}

/** A regular file's bytes for GET /v1/files/raw, streamed. */
export async function openRaw(
  workspace: Workspace,
  input: string,
): Promise<ReadableStream<Uint8Array>> {
  const helper = helperOf(workspace);
  const path = await workspace.jail.existing(input);
  const found = await act(input, () => helper.raw(relative(workspace.jail, path)));
  if (found.kind === "is_directory") throw isDirectory(input);
  if (found.kind !== "stream") throw notRegular(input);
  return found.bytes;
}

/**
 * Writes bytes to a regular file inside the jail, made if new; the parent must exist unless
 * createDirs. A FIFO, a socket or a device is refused before a byte is written.
 */
export async function writePath(
  workspace: Workspace,
  options: { path: string; bytes: Uint8Array; createDirs: boolean; maxFileBytes: number },
): Promise<{ path: string; bytes_written: number }> {
  const input = options.path;
  if (options.bytes.byteLength > options.maxFileBytes) {
    throw tooLarge(options.bytes.byteLength, options.maxFileBytes);
  }
  const helper = helperOf(workspace);
  const jail = workspace.jail;
  const resolved = await jail.resolve(input, { followFinal: true });
  if (resolved.isRoot) {
    throw new GuestError("invalid_request", 400, "the workspace root is a directory, not a file");
  }
  const parent = parentOf(resolved.path);
  if (!resolved.exists && !await exists(parent)) {
    if (!options.createDirs) {
      throw new GuestError(
        "not_found",
        404,
        `the directory of ${JSON.stringify(input)} does not exist; pass create_dirs: true`,
      );
    }
    await makeDirs(workspace, parent, input);
  }
  const written = await act(
    input,
    () => helper.write(relative(jail, resolved.path), options.bytes),
  );
  if (written === "is_directory") throw isDirectory(input);
  if (written === "other") throw notRegular(input);
  return { path: resolved.path, bytes_written: options.bytes.byteLength };
}

/** Deletes a file, a link or a directory (non-empty only with recursive); never the root. */
export async function deletePath(
  workspace: Workspace,
  options: { path: string; recursive: boolean },
): Promise<{ path: string; deleted: boolean }> {
  const { path: input, recursive } = options;
  const helper = helperOf(workspace);
  const resolved = await workspace.jail.resolve(input, { followFinal: false });
  if (resolved.isRoot) {
    throw new GuestError("invalid_request", 400, "the workspace root cannot be deleted");
  }
  if (!resolved.exists) {
    throw new GuestError("not_found", 404, `${JSON.stringify(input)} does not exist`);
  }
  await act(input, () => helper.delete(relative(workspace.jail, resolved.path), recursive));
  return { path: resolved.path, deleted: true };
}

/** Makes a directory (with its parents unless parents is false); created false if it existed. */
export async function makeDirectory(
  workspace: Workspace,
  options: { path: string; parents: boolean },
): Promise<{ path: string; created: boolean }> {
  const { path: input, parents } = options;
  const resolved = await workspace.jail.resolve(input, { followFinal: true });
  if (resolved.exists) {
    if (!(await Deno.stat(resolved.path).catch((error) => ioFailure(input, error))).isDirectory) {
      throw existsNotDirectory(input);
    }
    return { path: resolved.path, created: false };
  }
  if (!parents && !await exists(parentOf(resolved.path))) {
    throw new GuestError(
      "not_found",
      404,
      `the parent of ${JSON.stringify(input)} does not exist; pass parents: true`,
    );
  }
  const created = await makeDirs(workspace, resolved.path, input);
  return { path: resolved.path, created };
}

/** Moves a file, link or directory; the destination must not exist; never the root. */
export async function movePath(
  workspace: Workspace,
  move: { from: string; to: string },
): Promise<{ from: string; to: string }> {
  const { from, to } = move;
  const helper = helperOf(workspace);
  const jail = workspace.jail;
  const source = await jail.resolve(from, { followFinal: false });
  if (source.isRoot) {
    throw new GuestError("invalid_request", 400, "the workspace root cannot be moved");
  }
  if (!source.exists) {
    throw new GuestError("not_found", 404, `${JSON.stringify(from)} does not exist`);
  }
  const target = await jail.resolve(to, { followFinal: false });
  if (target.exists) throw destinationExists(to);
  if (!await exists(parentOf(target.path))) {
    throw new GuestError(
      "not_found",
      404,
      `the directory of the destination ${JSON.stringify(to)} does not exist`,
    );
  }
  if (target.path.startsWith(`${source.path}/`)) {
    throw new GuestError("invalid_request", 400, "a directory cannot be moved into itself");
  }
  try {
    await helper.move(relative(jail, source.path), relative(jail, target.path));
  } catch (error) {
    if (error instanceof HelperErrno && error.errno === EEXIST) throw destinationExists(to);
    throw helperFailure(from, error);
  }
  return { from: source.path, to: target.path };
}

/**
 * Makes each missing folder from the root down to `dir` (absolute, inside the root), each by the
 * helper beneath the root. Returns whether the last one was made by this call.
 */
async function makeDirs(workspace: Workspace, dir: string, input: string): Promise<boolean> {
  const helper = helperOf(workspace);
  const parts = relative(workspace.jail, dir).split("/").filter((part) => part !== ".");
  let created = false;
  for (let i = 1; i <= parts.length; i++) {
    const path = parts.slice(0, i).join("/");
    try {
      await helper.mkdir(path);
      created = true;
    } catch (error) {
      if (!(error instanceof HelperErrno && error.errno === EEXIST)) {
        throw helperFailure(input, error);
      }
      created = false;
    }
  }
  const info = await Deno.stat(dir).catch((error) => ioFailure(input, error));
  if (!info.isDirectory) throw existsNotDirectory(input);
  return created;
}

/** The 413 for content above BOX_MAX_FILE_BYTES. */
export function tooLarge(size: number, max: number): GuestError {
  return new GuestError(
    "payload_too_large",
    413,
    `the content is ${size} bytes, above BOX_MAX_FILE_BYTES (${max})`,
  );
}

/** Decodes base64 content, or 400 invalid_request. */
export function fromBase64(text: string): Uint8Array {
  const clean = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) {
    throw new GuestError("invalid_request", 400, "content is not valid base64");
  }
  const binary = atob(clean);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const EEXIST = 17;

/** What each errno of the helper means for the path it was given. */
function helperFailure(input: string, error: unknown): GuestError {
  if (!(error instanceof HelperErrno)) return ioError(input, error);
  const quoted = JSON.stringify(input);
  switch (error.errno) {
    case 2: // ENOENT
      return new GuestError("not_found", 404, `${quoted} does not exist`);
    case 20: // ENOTDIR: a folder on the way became something else
    case 40: // ELOOP: a link appeared where the jail saw none
    case 116: // ESTALE: the object changed between its stat and its open
      return new GuestError(
        "invalid_request",
        409,
        `${quoted} changed while the guest was using it (a folder on its path was swapped for ` +
          "a link or a file); nothing was done; try again",
      );
    case 18: // EXDEV: outside what RESOLVE_BENEATH allows
      return new GuestError("path_escape", 400, `the path ${quoted} leads outside the workspace`);
    case 17: // EEXIST
      return new GuestError("invalid_request", 409, `${quoted} already exists`);
    case 39: // ENOTEMPTY
      return new GuestError(
        "invalid_request",
        400,
        `${quoted} is a directory that is not empty; pass recursive=true`,
      );
    case 21: // EISDIR
      return isDirectory(input);
    case 7: // E2BIG: the helper's depth bound
      return new GuestError(
        "invalid_request",
        400,
        `${quoted} holds folders more than 256 levels deep; delete the deepest ones first`,
      );
    case 36: // ENAMETOOLONG
      return new GuestError("invalid_request", 400, `the path ${quoted} is too long`);
    case 6: // ENXIO: a socket, or a FIFO without a reader
      return notRegular(input);
    case 1: // EPERM
    case 13: // EACCES
      return new GuestError("io_error", 500, `cannot act on ${quoted}: permission denied`);
    case 28: // ENOSPC
    case 122: // EDQUOT
      return new GuestError("io_error", 500, `cannot write ${quoted}: no space left`);
  }
  return new GuestError("io_error", 500, `cannot act on ${quoted}: error ${error.errno}`);
}

async function act<T>(input: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw helperFailure(input, error);
  }
}

function helperOf(workspace: Workspace): FilesHelper {
  if (workspace.helper !== null) return workspace.helper;
  throw new GuestError(
    "not_ready",
    503,
    "the file routes need the guest's files helper, which cannot run on this machine; " +
      "see runbook.md#guest-files-helper-unavailable",
  );
}

/** A resolved path relative to the root, as the helper takes it ("." for the root). */
function relative(jail: Jail, path: string): string {
  if (path === jail.root) return ".";
  return path.slice(jail.root === "/" ? 1 : jail.root.length + 1);
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

function notRegular(input: string): GuestError {
  return new GuestError(
    "invalid_request",
    400,
    `${JSON.stringify(input)} is not a regular file but a FIFO, a socket or a device; ` +
      "the guest reads and writes regular files only",
  );
}

function isDirectory(input: string): GuestError {
  return new GuestError("invalid_request", 400, `${JSON.stringify(input)} is a directory`);
}

function existsNotDirectory(input: string): GuestError {
  return new GuestError(
    "invalid_request",
    409,
    `${JSON.stringify(input)} exists and is not a directory`,
  );
}

function destinationExists(to: string): GuestError {
  return new GuestError("invalid_request", 409, `the destination ${JSON.stringify(to)} exists`);
}

function ioFailure(input: string, error: unknown): never {
  throw ioError(input, error);
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
