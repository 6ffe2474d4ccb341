/**
 * Reading an app's manifest, `BOX_HOME/apps/<name>/app.toml`: the file, checked as
 * gurt.toml is (unknown keys are errors at every level, each problem names the file, the line and
 * the key), with its paths resolved inside the app's folder and its hash for the audit records.
 */
import { createHash } from "node:crypto";
import { ConfigError, parseStrictToml } from "../config/mod.ts";
import { BUILTIN_TOOLS } from "../tools/mod.ts";
import { manifestSchema } from "./manifest_rules.ts";
import type { ManifestBody, ResolvePath } from "./manifest_schema.ts";

export {
  APP_KINDS,
  type AppHeader,
  type AppPort,
  type AppSecret,
  type AppToolSettings,
  type SecretDelivery,
} from "./manifest_schema.ts";
export { REFUSED_ENV } from "./manifest_rules.ts";
export { HOME_PLACEHOLDER } from "./manifest_env_ports.ts";

/** An app's name, as it is written before the dot of its tools' names (mod/vault's APP_NAME). */
export const APP_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** The name of the app built into gurt (mod/tools/example_app.ts). */
const BUILTIN_APP = "example";

/** The largest app.toml gurt reads. */
const MAX_MANIFEST_BYTES = 256 * 1024;

const POINTER = "see runbook.md#app-manifest-invalid";

/** A manifest as read: its body and the facts of its file. */
export type AppManifest = ManifestBody & {
  /** The app's folder, as a real absolute path. */
  folder: string;
  /** The manifest file, as named in errors. */
  file: string;
  /** manifestHash of the file's text, for the audit records. */
  hash: string;
};

/** Why `name` cannot be an app's name, or null when it can. */
export function appNameProblem(name: string): string | null {
  if (!APP_NAME.test(name)) {
    return `${
      JSON.stringify(name.slice(0, 64))
    } is not an app name: use 1 to 32 lower-case letters, digits and -, starting with a letter (an app's tools are called <name>.<tool>)`;
  }
  if (name === BUILTIN_APP) return `"${name}" is the name of gurt's built-in example app`;
  if ((BUILTIN_TOOLS as readonly string[]).includes(name)) {
    return `"${name}" is the name of a built-in tool`;
  }
  return null;
}

/** The SHA-256 of a manifest's bytes (its text as UTF-8), in hex. */
export function manifestHash(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * Parses the text of `file`, the app.toml of the app in `folder` (an absolute path), into an
 * AppManifest, or throws a ConfigError naming the file, the line and the key. Paths starting with
 * ./ (command[0]) and module are resolved in the folder; one that leaves it, by .. or by a
 * symlink, is refused.
 */
export function parseManifest(file: string, text: string, folder: string): AppManifest {
  if (!folder.startsWith("/")) throw new Error(`an app's folder must be absolute: ${folder}`);
  const real = realFolder(file, folder);
  const body = parseStrictToml(file, text, {
    schema: manifestSchema(resolverIn(real)),
    pointer: POINTER,
  });
  return { ...body, folder: real, file, hash: manifestHash(text) };
}

/**
 * Reads `folder`/app.toml and parses it. Refuses a manifest that is a symlink, is not a regular
 * file, or that someone other than its owner (this user or root) may write, and the same of the
 * folder.
 */
export async function readManifest(folder: string): Promise<AppManifest> {
  const file = `${folder.replace(/\/+$/, "")}/app.toml`;
  checkNotWritableByOthers(file, folder, await statOf(file, folder, Deno.stat), "the app's folder");
  const info = await statOf(file, file, Deno.lstat);
  if (info.isSymlink) {
    throw new ConfigError(
      file,
      undefined,
      undefined,
      "is a symlink; an app's manifest must be a file of its own in the app's folder",
      POINTER,
    );
  }
  if (!info.isFile) {
    throw new ConfigError(file, undefined, undefined, "is not a regular file", POINTER);
  }
  checkNotWritableByOthers(file, file, info, "app.toml");
  const bytes = await readSameFile(file, info);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ConfigError(file, undefined, undefined, "is not UTF-8 text", POINTER);
  }
  return parseManifest(file, text, folder);
}

async function statOf(
  file: string,
  path: string,
  stat: (path: string) => Promise<Deno.FileInfo>,
): Promise<Deno.FileInfo> {
  try {
    return await stat(path);
  } catch (error) {
    const what = path === file ? "cannot be read" : `the app's folder ${path} cannot be read`;
    throw new ConfigError(file, undefined, undefined, `${what}: ${describe(error)}`, POINTER);
  }
}

/** Refuses a path others may write: group- or world-writable, or owned by another user. */
function checkNotWritableByOthers(
  file: string,
  path: string,
  info: Deno.FileInfo,
  what: string,
): void {
  const mode = info.mode ?? 0;
  const owner = info.uid ?? 0;
  const problem = (mode & 0o022) !== 0
    ? `is writable by its group or by everyone (mode ${(mode & 0o777).toString(8)})`
    : owner !== Deno.uid() && owner !== 0
    ? `is owned by uid ${owner}, neither this user nor root`
    : null;
  if (problem === null) return;
  throw new ConfigError(
    file,
    undefined,
    undefined,
    `${what} ${path} ${problem}: someone else could change what the app runs; make it the box owner's with chmod go-w`,
    POINTER,
  );
}

/** The file's bytes, from an open that is the same inode the lstat saw (not a swapped-in link). */
async function readSameFile(file: string, seen: Deno.FileInfo): Promise<Uint8Array> {
  using handle = await Deno.open(file, { read: true });
  const info = await handle.stat();
  if (info.ino !== seen.ino || info.dev !== seen.dev) {
    throw new ConfigError(file, undefined, undefined, "changed while it was read", POINTER);
  }
  if (info.size > MAX_MANIFEST_BYTES) {
    throw new ConfigError(
      file,
      undefined,
      undefined,
      `is ${info.size} bytes; a manifest may hold at most ${MAX_MANIFEST_BYTES}`,
      POINTER,
    );
  }
  const bytes = new Uint8Array(info.size);
  let read = 0;
  while (read < bytes.length) {
    const count = await handle.read(bytes.subarray(read));
    if (count === null) break;
    read += count;
  }
  return bytes.subarray(0, read);
}

function realFolder(file: string, folder: string): string {
  try {
    return Deno.realPathSync(folder);
  } catch (error) {
    throw new ConfigError(
      file,
      undefined,
      undefined,
      `the app's folder ${folder} cannot be read: ${describe(error)}`,
      POINTER,
    );
  }
}

/** Resolves a clean relative path inside the real folder `real`, refusing a symlink out of it. */
function resolverIn(real: string): ResolvePath {
  return (relative, use) => {
    const joined = `${real}/${relative}`;
    let target: string;
    try {
      target = Deno.realPathSync(joined);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        return { problem: `${relative} does not exist in the app's folder` };
      }
      return { problem: `${relative} cannot be read: ${describe(error)}` };
    }
    if (!target.startsWith(`${real}/`)) {
      return {
        problem: `${relative} leads outside the app's folder through a symlink (to ${target})`,
      };
    }
    const info = Deno.statSync(target);
    if (!info.isFile) return { problem: `${relative} is not a regular file` };
    if (use === "command" && ((info.mode ?? 0) & 0o111) === 0) {
      return { problem: `${relative} is not executable (chmod +x it)` };
    }
    return { path: target };
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
