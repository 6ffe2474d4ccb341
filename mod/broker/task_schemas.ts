/**
 * The bodies of the task broker's requests (docs/broker-api.md#the-task-socket), each one strict
 * schema.
 */
import { z } from "zod";

/** What a body without a key, or with an empty one, is answered (docs/broker-api.md). */
const KEY_REQUIRED = "a key is required";

/** A call's or an ask's key: required, 1 to 512 characters. */
const key = z.string({
  error: (issue) => issue.input === undefined ? KEY_REQUIRED : undefined,
}).min(1, { message: KEY_REQUIRED }).max(512);

/**
 * How long a request may wait on the owner, in ms (docs/broker-api.md#post-call): at most
 * `[approvals] wait_ms`, which is also the default. The MCP relay keeps it under its client's own
 * call timeout.
 */
const waitMs = z.number().int().min(0).optional();

export const stepBody = z.strictObject({ text: z.string(), data: z.unknown().optional() });

export const callBody = z.strictObject({
  tool: z.string().min(1).max(200),
  input: z.unknown(),
  key,
  waitMs,
});

/** A /call body, checked. */
export type CallBody = z.infer<typeof callBody>;

export const askBody = z.strictObject({
  question: z.string().min(1),
  key,
  costCents: z.number().int().min(0).optional(),
  payee: z.string().max(200).optional(),
  purpose: z.string().max(2000).optional(),
  waitMs,
});

/** An /ask body, checked. */
export type AskBody = z.infer<typeof askBody>;

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
