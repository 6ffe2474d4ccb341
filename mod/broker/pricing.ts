/** Prices token counts at a model's list rates, from the table shipped in prices.json. */
import prices from "./prices.json" with { type: "json" };

/** Token counts as /usage takes them. */
export interface TokenCounts {
  input: number;
  output: number;
  cacheWrite?: number;
  cacheRead?: number;
}

/** A model's list rates: US dollars per million tokens of each kind. */
export type Rates = { input: number; output: number; cacheWrite: number; cacheRead: number };
const table: Record<string, Rates> = prices.models;

/** A model's list rates under the name the table lists it by, or undefined. */
export function modelRates(model: string): Rates | undefined {
  return Object.hasOwn(table, model) ? { ...table[model] } : undefined;
}

/** The cost in whole US cents, rounded up, or undefined for a model the table does not list. */
export function priceUsage(model: string, tokens: TokenCounts): number | undefined {
  if (!Object.hasOwn(table, model)) return undefined;
  const rates = table[model];
  const microDollars = tokens.input * rates.input + tokens.output * rates.output +
    (tokens.cacheWrite ?? 0) * rates.cacheWrite + (tokens.cacheRead ?? 0) * rates.cacheRead;
  // Rates are dollars per million tokens: tokens x rate is micro-dollars; 10,000 of them make a cent.
  return Math.ceil(Math.round(microDollars * 1000) / 1000 / 10_000);
}

/** The models the table lists, by the names it lists them under. */
export function listedModels(): string[] {
  return Object.keys(table);
}
