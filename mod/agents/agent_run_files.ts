/**
 * Writes an agent's settings files into the task's home without following a link: every folder on
 * the way must be a real folder owned by the task's user (made 0700 where missing), and each file
 * is written under a new name in its folder and renamed over its place, so a link or a FIFO left
 * at that place is replaced, never written through.
 */

/** Why a settings file could not be written: names the file and what stood in the way. */
export class AgentFileError extends Error {}

/** Checks a relative path of adapter.files(): plain names joined by `/`, no `.` or `..`. */
function partsOf(relative: string): string[] {
  const parts = relative.split("/");
  const bad = relative === "" || relative.startsWith("/") ||
    parts.some((part) => part === "" || part === "." || part === ".." || part.includes("\0"));
  if (bad) {
    throw new AgentFileError(
      `the agent's settings file ${
        JSON.stringify(relative)
      } is not a plain path under its home; see runbook.md#agent-settings-refused`,
    );
  }
  return parts;
}

/** Throws unless `path` is a real folder (not a link) owned by `uid`. */
async function checkFolder(path: string, uid: number): Promise<void> {
  const info = await Deno.lstat(path);
  if (info.isSymlink || !info.isDirectory) {
    throw new AgentFileError(
      `${path} is ${
        info.isSymlink ? "a link" : "not a folder"
      }, so the agent's settings are not written through it; see runbook.md#agent-settings-refused`,
    );
  }
  if (info.uid !== uid) {
    throw new AgentFileError(
      `${path} belongs to uid ${info.uid}, not the task's user (${uid}), so the agent's settings are not written in it; see runbook.md#agent-settings-refused`,
    );
  }
}

/** Makes the folder if it is missing (0700), then checks it. */
async function ensureFolder(path: string, uid: number): Promise<void> {
  try {
    await Deno.mkdir(path, { mode: 0o700 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  await checkFolder(path, uid);
}

/**
 * Writes each file of `files` (path relative to `home` → text) into `home`, 0600, as the task's
 * user `uid`; a file already there is replaced.
 */
export async function writeAgentFiles(
  home: string,
  files: Record<string, string>,
  options: { uid: number },
): Promise<void> {
  await checkFolder(home, options.uid);
  for (const [relative, text] of Object.entries(files)) {
    const parts = partsOf(relative);
    let folder = home;
    for (const part of parts.slice(0, -1)) {
      folder = `${folder}/${part}`;
      await ensureFolder(folder, options.uid);
    }
    const target = `${folder}/${parts[parts.length - 1]}`;
    const temporary = `${folder}/.${parts[parts.length - 1]}.gurt-${crypto.randomUUID()}`;
    // createNew: a name that exists (a link put there) is refused, not followed.
    await Deno.writeTextFile(temporary, text, { createNew: true, mode: 0o600 });
    try {
      await Deno.rename(temporary, target);
    } catch (error) {
      await Deno.remove(temporary).catch(() => {});
      throw new AgentFileError(
        `the agent's settings file ${target} could not be written: ${
          error instanceof Error ? error.message : String(error)
        }; see runbook.md#agent-settings-refused`,
      );
    }
  }
}
