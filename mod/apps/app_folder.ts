/**
 * An app's folder as `gurt app add PATH` sends it to the core: read by the owner's command (which
 * may read the folder; the core reads nothing outside the box home), each regular file with its
 * path, whether it is executable, and its bytes. A link, a device or a FIFO in it is refused: a
 * link could lead the app's sandbox, which shows its folder read-only, anywhere. This file imports
 * nothing, so the owner's command loads it alone.
 */

/** One file of an app's folder. */
export interface AppFile {
  /** Its path inside the folder, `/`-separated, never `..`, never absolute. */
  path: string;
  executable: boolean;
  /** Its bytes, in base64. */
  data: string;
}

/** The most files, and bytes, an app's folder sent this way may hold. */
export const MAX_FOLDER_FILES = 5000;
export const MAX_FOLDER_BYTES = 64 * 1024 * 1024;

/**
 * What the box keeps at the top of an app's folder: never taken from the source, never bound into
 * the app's sandbox as its code (home.img is its home's image, mounted as root; passwd and group
 * its sandbox's /etc files).
 */
export const BOX_FILES: ReadonlySet<string> = new Set([
  "home",
  "home.img",
  "passwd",
  "group",
  "tools.json",
  "disabled",
  "app.log",
  "egress.sock",
  "instance",
]);

/** Reads an app's folder; throws a sentence for anything it may not hold. */
export async function readAppFolder(folder: string): Promise<AppFile[]> {
  const top = await Deno.lstat(folder).catch(() => null);
  if (top === null || !top.isDirectory) {
    throw new Error(`${folder} is not a folder; see runbook.md#app-install-failed`);
  }
  const files: AppFile[] = [];
  const budget = { bytes: 0 };
  await readInto(folder, "", files, budget);
  if (!files.some((file) => file.path === "app.toml")) {
    throw new Error(`${folder} holds no app.toml; see runbook.md#app-install-failed`);
  }
  return files;
}

async function readInto(
  root: string,
  inner: string,
  files: AppFile[],
  budget: { bytes: number },
): Promise<void> {
  const here = inner === "" ? root : `${root}/${inner}`;
  const names: string[] = [];
  for await (const entry of Deno.readDir(here)) names.push(entry.name);
  for (const name of names.sort()) {
    if (inner === "" && BOX_FILES.has(name)) continue;
    const path = inner === "" ? name : `${inner}/${name}`;
    const info = await Deno.lstat(`${root}/${path}`);
    if (info.isDirectory) {
      await readInto(root, path, files, budget);
      continue;
    }
    if (!info.isFile) {
      throw new Error(
        `${root}/${path} is not a regular file or folder (a link, a device or a FIFO); an app's folder holds only files and folders; see runbook.md#app-install-failed`,
      );
    }
    if (files.length >= MAX_FOLDER_FILES) {
      throw new Error(
        `${root} holds more than ${MAX_FOLDER_FILES} files; see runbook.md#app-install-failed`,
      );
    }
    budget.bytes += info.size;
    if (budget.bytes > MAX_FOLDER_BYTES) {
      throw new Error(
        `${root} holds more than ${MAX_FOLDER_BYTES} bytes; install a large server with gurt app add npm:PACKAGE@VERSION; see runbook.md#app-install-failed`,
      );
    }
    const bytes = await Deno.readFile(`${root}/${path}`);
    files.push({ path, executable: ((info.mode ?? 0) & 0o111) !== 0, data: toBase64(bytes) });
  }
}

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}
