/**
 * A task's spend by model: each answer's model.usage journal line (its tokens of each kind, its
 * exact price in billionths of a cent, where the price came from) summed by model and provider.
 * The audit log keeps whole-cent cost records as before; these lines are the exact account beside
 * them, and what `gurt task show`, `gurt task list`, the portal and `gurt usage` show. Pure.
 */
import { z } from "zod";

/** Billionths of a cent in a cent. */
export const NANOCENTS = 1_000_000_000;

const count = z.number().int().min(0);

/** One answer's usage, as its model.usage line holds it. */
export const modelUsageLine = z.strictObject({
  type: z.literal("model.usage"),
  time: z.string(),
  service: z.string(),
  /** The owner's provider that answered; absent: the built-in service. */
  provider: z.string().optional(),
  model: z.string(),
  tokens: z.strictObject({ input: count, output: count, cacheWrite: count, cacheRead: count }),
  /** The exact price, billionths of a cent. */
  nanocents: count,
  /**
   * Where the price came from: the owner's rates, the shipped table, the provider, the highest;
   * "bound": a request whose answer was never read (gurt serve died under it), charged at the
   * next start the most it could cost, its tokens unknown (0 here).
   */
  rates: z.enum(["owner", "listed", "reported", "highest", "bound"]),
  /** A stream cut short: charged its reported usage, or the most it could cost ("bound"). */
  cut: z.enum(["reported", "bound"]).optional(),
  hold: z.string().optional(),
});

/** A model.usage line. */
export type ModelUsageLine = z.infer<typeof modelUsageLine>;

/** What one model (at one provider) cost a task, or every task. */
export interface ModelSpend {
  model: string;
  /** The owner's provider; null: the built-in service. */
  provider: string | null;
  requests: number;
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  /** Billionths of a cent, exact. */
  nanocents: number;
  /** Answers priced at the table's highest rates, there being no price for the model. */
  unpriced: number;
  /** Answers cut short and charged the most they could cost. */
  bounded: number;
}

/** Adds one answer's usage line to `spend` (by model and provider). */
export function addUsage(spend: Map<string, ModelSpend>, line: ModelUsageLine): void {
  const provider = line.provider ?? null;
  const key = `${provider ?? ""}\u0000${line.model}`;
  let found = spend.get(key);
  if (found === undefined) {
    found = {
      model: line.model,
      provider,
      requests: 0,
      input: 0,
      output: 0,
      cacheWrite: 0,
      cacheRead: 0,
      nanocents: 0,
      unpriced: 0,
      bounded: 0,
    };
    spend.set(key, found);
  }
  found.requests++;
  found.input += line.tokens.input;
  found.output += line.tokens.output;
  found.cacheWrite += line.tokens.cacheWrite;
  found.cacheRead += line.tokens.cacheRead;
  found.nanocents += line.nanocents;
  if (line.rates === "highest") found.unpriced++;
  if (line.cut === "bound") found.bounded++;
}

/** The spend rows, most expensive first, then by model. */
export function spendRows(spend: Map<string, ModelSpend>): ModelSpend[] {
  return [...spend.values()].map((row) => ({ ...row })).sort((a, b) =>
    b.nanocents - a.nanocents || a.model.localeCompare(b.model)
  );
}

/**
 * The part of a cent of model spend not yet charged as a whole cent: the exact spend of the
 * usage lines past the whole cents of the model charges, from 0 up to (not including) a cent.
 */
export function carriedNanocents(state: { modelNanocents: number; modelCents: number }): number {
  const carried = state.modelNanocents - state.modelCents * NANOCENTS;
  return Math.min(Math.max(carried, 0), NANOCENTS - 1);
}
