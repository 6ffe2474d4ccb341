/** Real app folders in a temporary directory, and the refusal assertion the manifest tests share. */
import { ConfigError } from "../../mod/config/mod.ts";
import { parseManifest } from "../../mod/apps/manifest.ts";
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";

/** A file to write into an app's folder: its text and mode (0o644 unless given). */
export interface FolderFile {
  text: string;
  mode?: number;
}

/** Makes a 0700 folder under a new temporary directory, with `files` written into it. */
export async function appFolder(files: Record<string, FolderFile> = {}): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "gurt-app-" });
  const folder = `${root}/app`;
  await Deno.mkdir(folder, { mode: 0o700 });
  for (const [name, file] of Object.entries(files)) {
    const path = `${folder}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, file.text);
    await Deno.chmod(path, file.mode ?? 0o644);
  }
  return folder;
}

/** Removes the temporary directory around an app folder. */
export async function removeFolder(folder: string): Promise<void> {
  await Deno.remove(folder.slice(0, folder.lastIndexOf("/")), { recursive: true });
}

/**
 * Asserts that `lines` as app.toml in `folder` is refused at `line` (undefined: no line), naming
 * `key`, with a problem that includes `problem`; the message is a ConfigError's, ending with the
 * manifest's runbook pointer.
 */
export function assertRefused(
  folder: string,
  lines: string[],
  expected: { line: number | undefined; key: string; problem: string },
): ConfigError {
  const file = `${folder}/app.toml`;
  const error = assertThrows(() => parseManifest(file, lines.join("\n"), folder), ConfigError);
  const where = expected.line === undefined ? file : `${file}:${expected.line}`;
  assertEquals(
    [error.line, error.key],
    [expected.line, expected.key],
    `${error.message} (for ${JSON.stringify(lines)})`,
  );
  assertStringIncludes(error.message, `${where}: ${expected.key}: `);
  assertStringIncludes(error.message, expected.problem);
  assert(error.message.endsWith("; see runbook.md#app-manifest-invalid"), error.message);
  return error;
}
