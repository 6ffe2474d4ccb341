/**
 * The apps of a box home at the core's start: each folder of BOX_HOME/apps with its manifest and
 * the tool list kept from its last start. A folder whose manifest does not read is left out with a
 * sentence for the core's log (and `gurt app check`); the others are offered.
 */
import type { AppCatalog } from "./app_catalog.ts";
import { keptTools } from "./app_catalog.ts";
import { appsDir } from "./app_install.ts";
import { appNameProblem, readManifest } from "./manifest.ts";
import { writeFileAtomic } from "../common/mod.ts";

/** The file in an app's folder that says the owner turned it off (gurt app disable). */
export const DISABLED_FILE = "disabled";

/** The file in an app's folder that holds its install's own id. */
export const INSTANCE_FILE = "instance";

const INSTANCE = /^[a-z0-9]{12}$/;

/**
 * The id of the install in `folder`, made when it is first asked for: twelve random lower-case
 * letters and digits, never the same for two installs.
 */
export async function appInstance(folder: string): Promise<string> {
  const path = `${folder}/${INSTANCE_FILE}`;
  const kept = (await Deno.readTextFile(path).catch(() => "")).trim();
  if (INSTANCE.test(kept)) return kept;
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const id = [...crypto.getRandomValues(new Uint8Array(12))]
    .map((byte) => alphabet[byte % alphabet.length]).join("");
  await writeFileAtomic(path, id + "\n", { mode: 0o644 });
  return id;
}

/** Whether the owner turned the app in `folder` off. */
export async function isOwnerDisabled(folder: string): Promise<boolean> {
  return await Deno.lstat(`${folder}/${DISABLED_FILE}`).then(() => true, () => false);
}

/** Puts every app of `home` into `catalog`; returns a sentence for each that could not be. */
export async function loadApps(home: string, catalog: AppCatalog): Promise<string[]> {
  const problems: string[] = [];
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(appsDir(home))) {
      if (entry.name.startsWith(".staging-")) {
        // An install cut short by a stop: nothing of it was offered.
        await Deno.remove(`${appsDir(home)}/${entry.name}`, { recursive: true }).catch(() => {});
        continue;
      }
      if (entry.isDirectory) names.push(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  for (const name of names.sort()) {
    const problem = appNameProblem(name);
    if (problem !== null) {
      problems.push(`gurt: apps/${name} is left out: ${problem}`);
      continue;
    }
    const folder = `${appsDir(home)}/${name}`;
    try {
      const manifest = await readManifest(folder);
      await catalog.put(name, manifest, {
        listed: await keptTools(folder),
        ownerDisabled: await isOwnerDisabled(folder),
        instance: await appInstance(folder),
      });
    } catch (error) {
      problems.push(`gurt: the app ${name} is left out: ${(error as Error).message}`);
    }
  }
  return problems;
}
