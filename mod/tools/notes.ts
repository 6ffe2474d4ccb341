/**
 * The example app's notes file, tasks/<task>/notes.txt: one JSON line `{key, text}` per note. A
 * note is written once per idempotency key, the way a payment API honours one: a call that runs
 * again after a crash with the same `ctx.key` finds its line and does not add another.
 */

/** What example.note answers: the note's line number in the file and its text. */
export interface NoteAnswer {
  line: number;
  text: string;
}

/** Appends `{key, text}` to `task`'s notes unless a line with that key is already there. */
export async function appendNote(
  home: string,
  note: { task: string; key: string; text: string },
): Promise<NoteAnswer> {
  const { task } = note;
  const path = notesPath(home, task);
  const file = await Deno.open(path, { create: true, read: true, append: true, mode: 0o600 });
  try {
    // One writer at a time per file, also across the core's concurrent calls of one task.
    await file.lock(true);
    const text = await Deno.readTextFile(path);
    const lines = text.split("\n").filter((line) => line !== "");
    const found = lines.findIndex((line) => keyOf(line) === note.key);
    if (found !== -1) return { line: found + 1, text: note.text };
    // A torn last line (a crash mid-write) is ended first, so the new note stands on its own line.
    const lead = text === "" || text.endsWith("\n") ? "" : "\n";
    const bytes = new TextEncoder().encode(
      lead + JSON.stringify({ key: note.key, text: note.text }) + "\n",
    );
    let written = 0;
    while (written < bytes.length) written += await file.write(bytes.subarray(written));
    await file.syncData();
    return { line: lines.length + 1, text: note.text };
  } finally {
    file.close();
  }
}

/** Where a task's notes are kept. */
export function notesPath(home: string, task: string): string {
  return `${home}/tasks/${task}/notes.txt`;
}

function keyOf(line: string): string | undefined {
  try {
    const parsed = JSON.parse(line) as { key?: unknown };
    return typeof parsed.key === "string" ? parsed.key : undefined;
  } catch {
    return undefined; // a torn line from a crash mid-write counts as no note
  }
}
