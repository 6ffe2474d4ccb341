/**
 * notes: a module app (docs/app-sdk.md). It keeps notes in its home and exports them signed with
 * the owner's NOTES_TOKEN (HMAC-SHA256), so a service that holds the same token can check that an
 * export came from this box unaltered, while the task that asks for it never sees the token.
 */
import type { AppTool, AppTools, ToolContext } from "../../../mod/apps/app_sdk.ts";

interface Note {
  id: string;
  title: string;
  text: string;
}

const addNote: AppTool<{ title: string; text: string }> = {
  name: "add_note",
  description: "Adds a note with a title and a text. Asked again with the same call, it adds none.",
  input: {
    type: "object",
    properties: {
      title: { type: "string", minLength: 1, maxLength: 200 },
      text: { type: "string", maxLength: 10000 },
    },
    required: ["title", "text"],
    additionalProperties: false,
  },
  run: (ctx, input) =>
    changeNotes(ctx, (notes) => {
      // The call's key is the note's id: a call the box repeats (a retry) adds nothing twice.
      const added = !notes.some((note) => note.id === ctx.key);
      if (added) notes.push({ id: ctx.key, title: input.title, text: input.text });
      return { id: ctx.key, added, count: notes.length };
    }),
};

const listNotes: AppTool<Record<string, never>> = {
  name: "list_notes",
  description: "Lists the notes, oldest first.",
  readOnly: true,
  input: { type: "object", properties: {}, additionalProperties: false },
  run: async (ctx) => ({ notes: await readNotes(ctx) }),
};

const exportNotes: AppTool<Record<string, never>> = {
  name: "export_notes",
  description: "Exports the notes as JSON with an HMAC-SHA256 signature under the owner's token.",
  readOnly: true,
  secrets: ["NOTES_TOKEN"],
  input: { type: "object", properties: {}, additionalProperties: false },
  run: async (ctx) => {
    const body = JSON.stringify(await readNotes(ctx));
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(ctx.secret("NOTES_TOKEN")),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body));
    const signature = [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
    ctx.log(`exported ${body.length} bytes`);
    return { body, signature };
  },
};

export default [addNote, listNotes, exportNotes] satisfies AppTools;

function notesFile(ctx: ToolContext): string {
  if (ctx.home === null) throw new Error("the notes app has no home to keep its notes in");
  return `${ctx.home}/notes.json`;
}

async function readNotes(ctx: ToolContext): Promise<Note[]> {
  try {
    return JSON.parse(await Deno.readTextFile(notesFile(ctx)));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

let writing: Promise<unknown> = Promise.resolve();

/** Changes the notes one call at a time, and saves them by a rename so a crash loses none. */
function changeNotes<T>(ctx: ToolContext, change: (notes: Note[]) => T): Promise<T> {
  const done = writing.then(async () => {
    const notes = await readNotes(ctx);
    const result = change(notes);
    await Deno.writeTextFile(`${notesFile(ctx)}.tmp`, JSON.stringify(notes));
    await Deno.rename(`${notesFile(ctx)}.tmp`, notesFile(ctx));
    return result;
  });
  writing = done.catch(() => {});
  return done;
}
