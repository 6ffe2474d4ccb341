/**
 * Reading and writing the vault file safely: it must be a regular file (not a symlink), owned by the
 * user gurt runs as (root on a box), with no permission for group or others. A missing vault is
 * created empty with mode 0600. A rewrite is atomic (mod/common's writeFileAtomic, mode 0600).
 */
import { writeFileAtomic } from "../common/mod.ts";

/** The vault file cannot be used as it is: `gurt serve` refuses to start. */
export class VaultFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VaultFileError";
  }
}

/** Who may own the vault: the process's user id. */
export interface VaultOwner {
  uid: number;
}

/** The vault's text and when it was last changed. */
export interface VaultFileText {
  text: string;
  modified: Date | null;
}

/** Reads the vault's text after checking its kind, owner and mode; creates it empty if missing. */
export async function readVaultFile(path: string, owner: VaultOwner): Promise<VaultFileText> {
  let link: Deno.FileInfo;
  try {
    link = await Deno.lstat(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw unreadable(path, error);
    await createEmpty(path);
    link = await Deno.lstat(path);
  }
  if (link.isSymlink) {
    throw new VaultFileError(
      `the vault ${path} is a symbolic link; gurt reads only a regular file it owns, so that no ` +
        `one can point it at another file; replace the link with the file itself (mode 0600); ` +
        `see runbook.md#vault-permissions`,
    );
  }
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    throw unreadable(path, error);
  }
  try {
    const info = await file.stat();
    if (info.ino !== link.ino || info.dev !== link.dev) {
      throw new VaultFileError(
        `the vault ${path} changed while gurt opened it; start again; see runbook.md#vault-permissions`,
      );
    }
    checkFileInfo(info, { path, owner });
    const bytes = new Uint8Array(info.size);
    let read = 0;
    while (read < bytes.length) {
      const n = await file.read(bytes.subarray(read));
      if (n === null) break;
      read += n;
    }
    try {
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, read));
      return { text, modified: info.mtime };
    } catch {
      throw new VaultFileError(
        `the vault ${path} is not UTF-8 text; see runbook.md#vault-format`,
      );
    }
  } finally {
    file.close();
  }
}

/**
 * Throws when the vault file at `path` is not a regular file owned by `owner` with no group or
 * other permission.
 */
export function checkFileInfo(
  info: Deno.FileInfo,
  file: { path: string; owner: VaultOwner },
): void {
  const { path, owner } = file;
  const mode = (info.mode ?? 0) & 0o7777;
  const shown = `0${mode.toString(8).padStart(3, "0")}`;
  if (!info.isFile) {
    throw new VaultFileError(
      `the vault ${path} is not a regular file (mode ${shown}); see runbook.md#vault-permissions`,
    );
  }
  if (info.uid !== owner.uid) {
    throw new VaultFileError(
      `the vault ${path} (mode ${shown}) is owned by uid ${info.uid}, not by uid ${owner.uid} ` +
        `that gurt runs as; run chown ${owner.uid} ${path} if the file is yours; ` +
        `see runbook.md#vault-permissions`,
    );
  }
  if ((mode & 0o077) !== 0) {
    throw new VaultFileError(
      `the vault ${path} has mode ${shown}, so group or others can read or change it; ` +
        `run chmod 600 ${path} and check who may have read it; see runbook.md#vault-permissions`,
    );
  }
}

/** Replaces the vault with `text`, atomically, keeping it 0600. */
export async function writeVaultFile(path: string, text: string): Promise<void> {
  await writeFileAtomic(path, text, { mode: 0o600 });
}

async function createEmpty(path: string): Promise<void> {
  await Deno.mkdir(folderOf(path), { recursive: true, mode: 0o700 });
  try {
    const file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
    try {
      await Deno.chmod(path, 0o600);
      await file.sync();
    } finally {
      file.close();
    }
    await syncFolder(folderOf(path));
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw unreadable(path, error);
  }
}

async function syncFolder(dir: string): Promise<void> {
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

function unreadable(path: string, error: unknown): VaultFileError {
  const why = error instanceof Error ? error.message : String(error);
  return new VaultFileError(
    `the vault ${path} cannot be read or created (${why}); see runbook.md#vault-permissions`,
  );
}
