/** The bodies of the task broker's requests (seed 000), each one strict schema. */
import { z } from "zod";

const key = z.string().min(1, { message: "a key is required" }).max(512);

export const stepBody = z.strictObject({ text: z.string(), data: z.unknown().optional() });

export const callBody = z.strictObject({
  tool: z.string().min(1).max(200),
  input: z.unknown(),
  key: key.optional(),
});

export const askBody = z.strictObject({
  question: z.string().min(1),
  key: key.optional(),
  costCents: z.number().int().min(0).optional(),
  payee: z.string().max(200).optional(),
  purpose: z.string().max(2000).optional(),
});

export const costBody = z.strictObject({
  cents: z.number().int({ message: "cents must be a whole number" }).min(0, {
    message: "cents must be 0 or more",
  }),
  what: z.string().min(1).max(200),
});

export const usageBody = z.strictObject({
  model: z.string().min(1).max(200),
  what: z.string().min(1).max(200).optional(),
  tokens: z.strictObject({
    input: z.number().int().min(0),
    output: z.number().int().min(0),
    cacheWrite: z.number().int().min(0).optional(),
    cacheRead: z.number().int().min(0).optional(),
  }),
});
