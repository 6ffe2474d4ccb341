/** Durable file writes: a line written to a file open for appending, and a file replaced atomically. */

const encoder = new TextEncoder();

/** Writes `line` and a newline to a file opened for appending (into the page cache, unsynced). */
export function writeLine(file: Deno.FsFile, line: string): void {
  const bytes = encoder.encode(`${line}\n`);
  let written = 0;
  while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
}

/**
 * Replaces `path` with `content`, text or bytes (mode 0600 unless given), so that a reader sees the old file or the
 * new one and a power cut leaves one of them: the text goes to `<path>.tmp`, written to its end and
 * synced, which is renamed over `path`, and the folder is synced. The temporary file is created
 * anew (exclusively): whatever was at its name, a link someone planted there included, is removed
 * first, never followed; one planted after that makes the write fail rather than go elsewhere.
 */
export async function writeFileAtomic(
  path: string,
  content: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  const temporary = `${path}.tmp`;
  await Deno.remove(temporary).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  const file = await Deno.open(temporary, { write: true, createNew: true, mode });
  try {
    const bytes = typeof content === "string" ? encoder.encode(content) : content;
    let written = 0;
    while (written < bytes.length) written += await file.write(bytes.subarray(written));
    await file.sync();
    await exactMode(file, temporary, mode);
  } catch (error) {
    file.close();
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
  file.close();
  await Deno.rename(temporary, path);
  await syncDirectory(path.slice(0, path.lastIndexOf("/")) || "/");
}

/**
 * Gives a file just created the mode asked for where the umask took bits from it. Deno has no
 * fchmod, so the chmod goes by name, and only once the name is checked to be the open file.
 */
async function exactMode(file: Deno.FsFile, path: string, mode: number): Promise<void> {
  const opened = await file.stat();
  if ((opened.mode! & 0o7777) === mode) return;
  const named = await Deno.lstat(path);
  if (named.dev !== opened.dev || named.ino !== opened.ino) {
    throw new Error(
      `${path} was replaced by another file or a link while gurt wrote it, so gurt did not write it`,
    );
  }
  await Deno.chmod(path, mode);
}

/** fdatasync of a file as it is; a file that does not exist has nothing to sync. */
export async function syncFile(path: string): Promise<void> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  try {
    await file.syncData();
  } finally {
    file.close();
  }
}

/** Syncs a directory, so a file created or renamed in it survives a power cut. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}
