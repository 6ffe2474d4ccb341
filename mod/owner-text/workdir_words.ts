/**
 * A task's workdirs in words, for `gurt task show` and the portal's task page: each folder with
 * its mode, and the journal's workdir events (the mount, with its read-only paths; the summary of
 * the task's writes at its end). Paths are the owner's, but a task named the files: shown as data.
 */
import { shownText } from "./escape.ts";

/** A workdir as the task's view carries it. */
export interface WorkdirShown {
  path: string;
  readOnly: boolean;
  mode: string;
}

/** `PATH (writable, grant auto)`. */
export function workdirText(workdir: WorkdirShown): string {
  const access = workdir.readOnly ? "read-only" : "writable";
  return `${shownText(workdir.path, { max: 4096 })} (${access}, grant ${
    shownText(workdir.mode, { max: 10 })
  })`;
}

type Detail = Record<string, unknown>;

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function sized(entry: unknown): string {
  const { path, before, after } = (entry ?? {}) as Detail;
  const size = (n: unknown) => (typeof n === "number" ? `${n} B` : "none");
  return `${shownText(String(path), { max: 400 })} ${size(before)} -> ${size(after)}`;
}

/** A workdir event of the journal in words, or null for another event. */
export function workdirEventWords(event: string, detail: Detail): string | null {
  if (event === "workdir.mounted") {
    const ro = list(detail.read_only_paths).length;
    const env = list(detail.covered_env_files).length;
    return `workdir ${shownText(String(detail.path), { max: 4096 })} mounted ${
      shownText(String(detail.mode), { max: 4 })
    } (grant ${
      shownText(String(detail.grant_mode), { max: 10 })
    }): ${ro} read-only paths, ${env} .env files covered`;
  }
  if (event === "workdir.writes") {
    const files = (detail.files ?? {}) as Detail;
    const named = [
      ...list(files.added).map((entry) => `+ ${sized(entry)}`),
      ...list(files.changed).map((entry) => `~ ${sized(entry)}`),
      ...list(files.removed).map((entry) => `- ${sized(entry)}`),
    ];
    const head = `workdir ${shownText(String(detail.workdir), { max: 4096 })}: ${
      Number(detail.added)
    } added, ${Number(detail.changed)} changed, ${Number(detail.removed)} removed, ${
      Number(detail.bytesWritten)
    } B written${detail.truncated === true ? " (listing truncated)" : ""}`;
    return named.length === 0 ? head : `${head}; ${named.join(", ")}`;
  }
  if (event === "fs.blocked") {
    return `blocked ${shownText(String(detail.path), { max: 4096 })}: ${
      shownText(String(detail.reason), { max: 200 })
    }`;
  }
  return null;
}
