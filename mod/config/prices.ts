/**
 * gurt.toml's `[models.prices."<model>"]`: the owner's rates for a model, in US dollars per million
 * tokens as mod/model-proxy/prices.json lists them (`input`, `output`, `cache_write`, `cache_read`).
 * The owner's rates win over the shipped table's; a model priced 0 costs nothing. Each rate is a
 * whole number of thousandths of a cent per million tokens (five decimals of a dollar at most), the
 * unit the endpoint sums exactly.
 */
import { z } from "zod";

/** A rate in dollars per million tokens: at least 0, at most five decimals. */
const rate = z.number().min(0, { message: "must be 0 or more dollars per million tokens" })
  .max(1_000_000, { message: "must be at most 1000000 dollars per million tokens" })
  .refine((value) => Math.abs(value * 100_000 - Math.round(value * 100_000)) < 1e-6, {
    message:
      "must have at most five decimals (a whole number of thousandths of a cent per million tokens)",
  });

/** One `[models.prices."<model>"]`: input and output required; a cache rate absent is input's. */
export const modelPriceSchema = z.strictObject({
  input: rate,
  output: rate,
  cache_write: rate.optional(),
  cache_read: rate.optional(),
});

/** A model's rates after defaults, dollars per million tokens, in prices.json's field names. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

/** `[models.prices]`: by model name (as a task names it, or as its provider is sent it). */
export const pricesSchema = z.record(
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}$/, {
    message: 'must be a model\'s name, such as "qwen3-coder"',
  }),
  modelPriceSchema.transform((price): ModelPrice => ({
    input: price.input,
    output: price.output,
    cacheWrite: price.cache_write ?? price.input,
    cacheRead: price.cache_read ?? price.input,
  })),
).default({});
