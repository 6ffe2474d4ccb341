/** The app `example`: the tools the tests and the demo use. */
import { z } from "zod";
import { appendNote } from "./notes.ts";
import { type AppTool, defineTool } from "./tool.ts";

const echo = defineTool({
  name: "example.echo",
  description: "Returns the text it is given. Free.",
  readOnly: true,
  input: z.strictObject({ text: z.string().max(1_000_000) }),
  secrets: [],
  run: (_ctx, input) => Promise.resolve({ text: input.text }),
});

const spend = defineTool({
  name: "example.spend",
  description: "Pretends to pay `cents` US cents to `payee`; costs `cents`.",
  input: z.strictObject({
    cents: z.number().int().min(0).max(100_000_000),
    payee: z.string().min(1).max(200).optional(),
  }),
  cost: (input) => input.cents,
  secrets: [],
  run: (ctx, input) =>
    Promise.resolve({ paid: input.cents, payee: input.payee ?? null, idempotency_key: ctx.key }),
});

const note = defineTool({
  name: "example.note",
  description:
    "Appends a line to the task's notes (tasks/<task>/notes.txt). Free. Idempotent on the call's key.",
  input: z.strictObject({ text: z.string().max(10_000) }),
  secrets: [],
  run: (ctx, input) => appendNote(ctx.home, { task: ctx.task, key: ctx.key, text: input.text }),
});

/** Every tool of the example app. */
export const exampleApp: readonly AppTool<never>[] = [echo, spend, note] as AppTool<never>[];
