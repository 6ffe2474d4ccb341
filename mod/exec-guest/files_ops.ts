/**
 * The file operations, each on a path the jail has just resolved. The resolved path holds no
 * symbolic link, so the operation acts on what was checked.
 */
import { GuestError } from "./errors.ts";
import { ioError, type Jail } from "./jail.ts";

/** The limits the file operations enforce. */
export interface FileLimits {
  maxFileBytes: number;
  maxDirEntries: number;
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
  jail: Jail,
  input: string,
  options: FileLimits & { encoding: "utf8" | "base64" },
): Promise<ReadAnswer> {
  const path = await jail.existing(input);
  const info = await stat(path, input);
  if (info.isDirectory) return await list(path, input, options.maxDirEntries);
  if (!info.isFile) {
    throw new GuestError("invalid_request", 400, `${JSON.stringify(input)} is not a regular file`);
  }
  if (info.size > options.maxFileBytes) {
    throw new GuestError(
      "payload_too_large",
      413,
      `${JSON.stringify(input)} is ${info.size} bytes, above BOX_MAX_FILE_BYTES ` +
        `(${options.maxFileBytes}); fetch it with GET /v1/files/raw`,
    );
  }
  const bytes = await attempt(input, () => Deno.readFile(path));
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

async function list(path: string, input: string, cap: number): Promise<ReadAnswer> {
  const entries: {
    name: string;
    kind: "file" | "directory" | "symlink" | "other";
    size: number;
  }[] = [];
  let truncated = false;
  await attempt(input, async () => {
    for await (const entry of Deno.readDir(path)) {
      if (entries.length >= cap) {
        truncated = true;
        break;
      }
      let size = 0;
      try {
        size = (await Deno.lstat(`${path}/${entry.name}`)).size;
      } catch {
        // Gone between the listing and the lstat: report it with size 0.
      }
      const kind = entry.isSymlink
        ? "symlink"
        : entry.isDirectory
        ? "directory"
        : entry.isFile
        ? "file"
        : "other";
      entries.push({ name: entry.name, kind, size });
    }
  });
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return { kind: "directory", path, entries, truncated };
}

/** Opens a regular file for GET /v1/files/raw; the caller streams and closes it. */
export async function openRaw(jail: Jail, input: string): Promise<Deno.FsFile> {
  const path = await jail.existing(input);
  const info = await stat(path, input);
  if (!info.isFile) {
    throw new GuestError("invalid_request", 400, `${JSON.stringify(input)} is not a regular file`);
  }
  return await attempt(input, () => Deno.open(path, { read: true }));
}

/** Writes bytes to a file inside the jail; the parent must exist unless createDirs. */
export async function writePath(
  jail: Jail,
  input: string,
  options: { bytes: Uint8Array; createDirs: boolean; maxFileBytes: number },
): Promise<{ path: string; bytes_written: number }> {
  if (options.bytes.byteLength > options.maxFileBytes) {
    throw tooLarge(options.bytes.byteLength, options.maxFileBytes);
  }
  const resolved = await jail.resolve(input, { followFinal: true });
  if (resolved.isRoot) {
    throw new GuestError("invalid_request", 400, "the workspace root is a directory, not a file");
  }
  if (resolved.exists && (await stat(resolved.path, input)).isDirectory) {
    throw new GuestError("invalid_request", 400, `${JSON.stringify(input)} is a directory`);
  }
  const parent = resolved.path.slice(0, resolved.path.lastIndexOf("/")) || "/";
  if (!await exists(parent)) {
    if (!options.createDirs) {
      throw new GuestError(
        "not_found",
        404,
        `the directory of ${JSON.stringify(input)} does not exist; pass create_dirs: true`,
      );
    }
    await attempt(input, () => Deno.mkdir(parent, { recursive: true }));
  }
  await attempt(input, () => Deno.writeFile(resolved.path, options.bytes));
  return { path: resolved.path, bytes_written: options.bytes.byteLength };
}

/** Deletes a file, a link or a directory (non-empty only with recursive); never the root. */
export async function deletePath(
  jail: Jail,
  input: string,
  recursive: boolean,
): Promise<{ path: string; deleted: boolean }> {
  const resolved = await jail.resolve(input, { followFinal: false });
  if (resolved.isRoot) {
    throw new GuestError("invalid_request", 400, "the workspace root cannot be deleted");
  }
  if (!resolved.exists) {
    throw new GuestError("not_found", 404, `${JSON.stringify(input)} does not exist`);
  }
  try {
    await Deno.remove(resolved.path, { recursive });
  } catch (error) {
    const message = error instanceof Error ? error.message : "";
    if (!recursive && /not empty|ENOTEMPTY|os error 39/i.test(message)) {
      throw new GuestError(
        "invalid_request",
        400,
        `${JSON.stringify(input)} is a directory that is not empty; pass recursive=true`,
      );
    }
    throw ioError(input, error);
  }
  return { path: resolved.path, deleted: true };
}

/** Makes a directory (with its parents unless parents is false); created false if it existed. */
export async function makeDirectory(
  jail: Jail,
  input: string,
  parents: boolean,
): Promise<{ path: string; created: boolean }> {
  const resolved = await jail.resolve(input, { followFinal: true });
  if (resolved.exists) {
    if (!(await stat(resolved.path, input)).isDirectory) {
      throw new GuestError(
        "invalid_request",
        409,
        `${JSON.stringify(input)} exists and is not a directory`,
      );
    }
    return { path: resolved.path, created: false };
  }
  const parent = resolved.path.slice(0, resolved.path.lastIndexOf("/")) || "/";
  if (!parents && !await exists(parent)) {
    throw new GuestError(
      "not_found",
      404,
      `the parent of ${JSON.stringify(input)} does not exist; pass parents: true`,
    );
  }
  await attempt(input, () => Deno.mkdir(resolved.path, { recursive: parents }));
  return { path: resolved.path, created: true };
}

/** Moves a file, link or directory; the destination must not exist; never the root. */
export async function movePath(
  jail: Jail,
  from: string,
  to: string,
): Promise<{ from: string; to: string }> {
  const source = await jail.resolve(from, { followFinal: false });
  if (source.isRoot) {
    throw new GuestError("invalid_request", 400, "the workspace root cannot be moved");
  }
  if (!source.exists) {
    throw new GuestError("not_found", 404, `${JSON.stringify(from)} does not exist`);
  }
  const target = await jail.resolve(to, { followFinal: false });
  if (target.exists) {
    throw new GuestError("invalid_request", 409, `the destination ${JSON.stringify(to)} exists`);
  }
  const parent = target.path.slice(0, target.path.lastIndexOf("/")) || "/";
  if (!await exists(parent)) {
    throw new GuestError(
      "not_found",
      404,
      `the directory of the destination ${JSON.stringify(to)} does not exist`,
    );
  }
  if (target.path.startsWith(`${source.path}/`)) {
    throw new GuestError("invalid_request", 400, "a directory cannot be moved into itself");
  }
  await attempt(from, () => Deno.rename(source.path, target.path));
  return { from: source.path, to: target.path };
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

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

async function stat(path: string, input: string): Promise<Deno.FileInfo> {
  return await attempt(input, () => Deno.stat(path));
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

async function attempt<T>(input: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw ioError(input, error);
  }
}
