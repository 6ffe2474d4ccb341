/** The bodies of the admin socket's requests. */
import { z } from "zod";

export const refuseBody = z.strictObject({ reason: z.string().max(2000).optional() });

export const approveBody = z.strictObject({ by: z.string().min(1).max(200).optional() });

export const startTaskBody = z.strictObject({
  prompt: z.string().max(1_000_000).default(""),
  worker: z.discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("test"), scriptText: z.string().max(1_000_000) }),
    z.strictObject({ kind: z.literal("cmd"), command: z.array(z.string()).min(1) }),
    z.strictObject({ kind: z.literal("none") }),
    z.strictObject({
      kind: z.literal("loop"),
      model: z.string().min(1).max(200).nullable().default(null),
    }),
  ]),
  tools: z.array(z.string().min(1).max(200)).max(200).default(["example.echo"]),
  budgetCents: z.number().int().min(0).nullable().default(null),
});
export type StartTask = z.infer<typeof startTaskBody>;

export const stopTaskBody = z.strictObject({ reason: z.string().max(2000).optional() });
