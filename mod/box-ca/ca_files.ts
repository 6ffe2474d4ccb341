/**
 * The box CA's folder and files as gurt accepts them: `ca/` a folder (0700) and `ca.key` (0600),
 * `ca.pem` and `bundle.pem` (0644) regular files, all owned by the user gurt runs as. A link, a
 * file of another kind or owner, a folder or certificate that group or others can change, or a key
 * they can read stops the open: the CA may sign TLS for the model hosts, so whoever could change it
 * could read every task's model traffic.
 */
import { BoxCaError } from "./box_ca_error.ts";

/** The two files of the CA, by what they hold. */
export type CaFileKind = "key" | "certificate";

const KIND_NAME: Record<CaFileKind, string> = {
  key: "the box CA key",
  certificate: "the box CA certificate",
};

/** Makes `dir` (0700) if it is missing, then checks it is a folder only its owner can change. */
export async function ensureCaDir(dir: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw unreadable(`the box CA folder ${dir}`, error);
    }
    try {
      await Deno.mkdir(dir, { mode: 0o700 });
      await Deno.chmod(dir, 0o700);
    } catch (made) {
      throw new BoxCaError(
        `the box CA folder ${dir} cannot be made (${message(made)}); see runbook.md#box-ca`,
      );
    }
    info = await Deno.lstat(dir);
  }
  const what = `the box CA folder ${dir}`;
  if (info.isSymlink) throw symlink(what, "a folder");
  if (!info.isDirectory) {
    throw new BoxCaError(`${what} is not a folder; see runbook.md#box-ca`);
  }
  checkOwner(info, what, dir);
  const mode = modeOf(info);
  if ((mode & 0o022) !== 0) {
    throw new BoxCaError(
      `${what} has mode ${shown(mode)}, so group or others can change the files in it; ` +
        `run chmod 700 ${dir}; see runbook.md#box-ca`,
    );
  }
}

/**
 * Reads the CA's `kind` file at `path` after checking its kind, owner and mode (the key: no
 * permission at all for group or others; the certificate: none to write); null if it is missing.
 */
export async function readCaFile(path: string, kind: CaFileKind): Promise<string | null> {
  const what = `${KIND_NAME[kind]} ${path}`;
  let link: Deno.FileInfo;
  try {
    link = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw unreadable(what, error);
  }
  if (link.isSymlink) throw symlink(what, "a regular file");
  if (!link.isFile) {
    throw new BoxCaError(`${what} is not a regular file; see runbook.md#box-ca`);
  }
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    throw unreadable(what, error);
  }
  try {
    const info = await file.stat();
    if (info.ino !== link.ino || info.dev !== link.dev || !info.isFile) {
      throw new BoxCaError(
        `${what} changed while gurt opened it; start again; see runbook.md#box-ca`,
      );
    }
    checkOwner(info, what, path);
    checkMode(info, kind, path);
    const bytes = new Uint8Array(info.size);
    let read = 0;
    while (read < bytes.length) {
      const n = await file.read(bytes.subarray(read));
      if (n === null) break;
      read += n;
    }
    return new TextDecoder().decode(bytes.subarray(0, read));
  } finally {
    file.close();
  }
}

function checkMode(info: Deno.FileInfo, kind: CaFileKind, path: string): void {
  const mode = modeOf(info);
  if (kind === "key" && (mode & 0o077) !== 0) {
    throw new BoxCaError(
      `the box CA key ${path} has mode ${shown(mode)}, so group or others can read or change the ` +
        `box CA's key; run chmod 600 ${path}, and if anyone else could have read it, make a new ` +
        `CA; see runbook.md#box-ca`,
    );
  }
  if (kind === "certificate" && (mode & 0o022) !== 0) {
    throw new BoxCaError(
      `the box CA certificate ${path} has mode ${shown(mode)}, so group or others can change it; ` +
        `run chmod 644 ${path}; see runbook.md#box-ca`,
    );
  }
}

function checkOwner(info: Deno.FileInfo, what: string, path: string): void {
  const uid = Deno.uid();
  if (uid !== null && info.uid !== uid) {
    throw new BoxCaError(
      `${what} is owned by uid ${info.uid}, not by uid ${uid} that gurt runs as; run ` +
        `chown ${uid} ${path} if it is yours; see runbook.md#box-ca`,
    );
  }
}

function symlink(what: string, kind: string): BoxCaError {
  return new BoxCaError(
    `${what} is a symbolic link; gurt uses only ${kind} it owns there, so that no one can point ` +
      `it at another; replace the link with the ${kind} itself; see runbook.md#box-ca`,
  );
}

function unreadable(what: string, error: unknown): BoxCaError {
  return new BoxCaError(`${what} cannot be read (${message(error)}); see runbook.md#box-ca`);
}

function modeOf(info: Deno.FileInfo): number {
  return (info.mode ?? 0) & 0o7777;
}

function shown(mode: number): string {
  return `0${mode.toString(8).padStart(3, "0")}`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
