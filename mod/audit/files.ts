/** Where the audit log lives and how its files are named: audit/YYYY-MM-DD.jsonl by UTC date. */

const FILE_NAME = /^\d{4}-\d{2}-\d{2}\.jsonl$/;

/** The audit directory of a box home. */
export function auditDir(home: string): string {
  return `${home}/audit`;
}

/** The name of the file a record with this ISO time belongs in, by its UTC date. */
export function fileNameFor(time: string): string {
  return `${time.slice(0, 10)}.jsonl`;
}

/** The audit files in a directory, in name order (which is date order); none if it is missing. */
export async function listAuditFiles(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && FILE_NAME.test(entry.name)) names.push(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return names.sort();
}

/** The last line of a file's content and whether it ends with a newline; null if it is empty. */
export function lastLineOf(content: Uint8Array): { bytes: Uint8Array; hasNewline: boolean } | null {
  if (content.length === 0) return null;
  const hasNewline = content[content.length - 1] === 10;
  const end = hasNewline ? content.length - 1 : content.length;
  const start = content.lastIndexOf(10, end - 1) + 1;
  return { bytes: content.subarray(start, end), hasNewline };
}

/**
 * A file's whole content, read into shared memory, which the hasher Worker reads where it is
 * (line_hasher.ts). Read to its end, as Deno.readFile reads: a file that grew since its size was
 * taken is read to its new end.
 */
export function readShared(path: string): Promise<Uint8Array<SharedArrayBuffer>> {
  return readInPieces(path, Infinity, () => {});
}

/** About how many bytes readSharedLines reads at a time. */
const PIECE_BYTES = 1 << 20;

/**
 * Reads a file into shared memory as readShared does, a piece at a time, and gives each run of
 * whole lines as soon as it is read, so that the hasher starts on the first lines while the rest
 * is read. The runs, in order, are the whole content: each ends at a newline, but the last, which
 * ends at the file's end.
 */
export async function readSharedLines(
  path: string,
  onLines: (lines: Uint8Array<SharedArrayBuffer>) => void,
  options: { pieceBytes?: number } = {},
): Promise<void> {
  let given = 0;
  const content = await readInPieces(
    path,
    Math.max(1, options.pieceBytes ?? PIECE_BYTES),
    (buffer, length) => {
      let newline = length - 1;
      while (newline >= given && buffer[newline] !== 10) newline--;
      if (newline < given) return;
      onLines(buffer.subarray(given, newline + 1));
      given = newline + 1;
    },
  );
  if (given < content.length) onLines(content.subarray(given));
}

/** Reads a file to its end, `pieceBytes` at most at a time, telling `onRead` after each read. */
async function readInPieces(
  path: string,
  pieceBytes: number,
  onRead: (buffer: Uint8Array<SharedArrayBuffer>, length: number) => void,
): Promise<Uint8Array<SharedArrayBuffer>> {
  const file = await Deno.open(path);
  try {
    // One byte more than the file holds, so that the read that finds its end has room.
    let buffer = new Uint8Array(new SharedArrayBuffer((await file.stat()).size + 1));
    let length = 0;
    while (true) {
      if (length === buffer.length) {
        const bigger = new Uint8Array(new SharedArrayBuffer(buffer.length * 2));
        bigger.set(buffer);
        buffer = bigger;
      }
      const read = await file.read(
        buffer.subarray(length, Math.min(buffer.length, length + pieceBytes)),
      );
      if (read === null) break;
      length += read;
      onRead(buffer, length);
    }
    return buffer.subarray(0, length);
  } finally {
    file.close();
  }
}

/** Up to `length` bytes of the file at `path` from `offset` (fewer where the file ends first). */
export async function readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    await file.seek(offset, Deno.SeekMode.Start);
    const buffer = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const read = await file.read(buffer.subarray(got));
      if (read === null) break;
      got += read;
    }
    return buffer.subarray(0, got);
  } finally {
    file.close();
  }
}
