/** Durable file writes: an appended line that is on disk, and a file replaced atomically. */

const encoder = new TextEncoder();

/** Appends `line` and a newline to `path` (mode 0600 if created) and syncs it before returning. */
export async function appendLineSynced(path: string, line: string): Promise<void> {
  // The open and the write are synchronous: they copy a line into the page cache in microseconds,
  // where each async operation costs a trip through Deno's blocking pool. The fdatasync, which
  // waits for the disk, stays async (as in the audit writer).
  const file = Deno.openSync(path, { append: true, create: true, mode: 0o600 });
  try {
    writeLine(file, line);
    await file.syncData();
  } finally {
    file.close();
  }
}

/** Writes `line` and a newline to a file opened for appending (into the page cache, unsynced). */
export function writeLine(file: Deno.FsFile, line: string): void {
  const bytes = encoder.encode(`${line}\n`);
  let written = 0;
  while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
}

/** Replaces `path` with `text`: a temporary file, synced, renamed over it, the folder synced. */
export async function writeFileAtomic(path: string, text: string, mode = 0o600): Promise<void> {
  const temporary = `${path}.tmp`;
  const file = await Deno.open(temporary, { write: true, create: true, truncate: true, mode });
  try {
    await file.write(encoder.encode(text));
    await file.sync();
  } finally {
    file.close();
  }
  await Deno.chmod(temporary, mode);
  await Deno.rename(temporary, path);
  await syncDirectory(path.slice(0, path.lastIndexOf("/")) || "/");
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
