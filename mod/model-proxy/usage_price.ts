/**
 * The price of a model answer at the model's list rates, in exact fractions of a cent, from the
 * core's one price table (mod/broker's prices.json).
 *
 * mod/broker/mod.ts exports only priceUsage, which prices whole cents rounded up. A rate in cents
 * per million tokens is what it answers for a million tokens of that kind, and that is exact for
 * every list rate of at most two decimals of a dollar (all of the table's). So the rates are read
 * back from it once per model, and a request's price is the exact sum.
 * TODO(issue 19): use the table's rates directly once mod/broker/mod.ts exports them (mod/broker is
 * being refactored by others and is not this module's to edit).
 */
import { priceUsage } from "../broker/mod.ts";
import type { TokenCounts } from "./answer_usage.ts";

type Rates = TokenCounts;

const MILLION = 1_000_000;
const ZERO: TokenCounts = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
const KINDS = ["input", "output", "cacheWrite", "cacheRead"] as const;

/** Cents per million tokens of each kind, per model; null for a model the table does not list. */
const known = new Map<string, Rates | null>();

function ratesOf(model: string): Rates | null {
  let rates = known.get(model);
  if (rates === undefined) {
    rates = null;
    if (priceUsage(model, ZERO) !== undefined) {
      const found = { ...ZERO };
      for (const kind of KINDS) found[kind] = priceUsage(model, { ...ZERO, [kind]: MILLION }) ?? 0;
      rates = found;
    }
    known.set(model, rates);
  }
  return rates;
}

/** The price of `tokens` on `model` in cents, a fraction where it falls so; null if unlisted. */
export function exactCents(model: string, tokens: TokenCounts): number | null {
  const rates = ratesOf(model);
  if (rates === null) return null;
  let perMillion = 0;
  for (const kind of KINDS) perMillion += tokens[kind] * rates[kind];
  return perMillion / MILLION;
}
