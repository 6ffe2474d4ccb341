/**
 * The price of a model answer at the model's list rates, in exact fractions of a cent, from the
 * core's one price table (mod/broker's prices.json, in dollars per million tokens). Its rates are
 * read once per model as cents per million tokens, to a thousandth of a cent (every list rate is
 * a whole number of thousandths: gpt-5-nano's cached input is $0.005, half a cent), so a request's
 * price is the exact sum of its tokens times those rates.
 */
import { listedModels, modelRates } from "../broker/mod.ts";
import type { TokenCounts } from "./answer_usage.ts";

type Rates = TokenCounts;

const MILLION = 1_000_000;
const ZERO: TokenCounts = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
const KINDS = ["input", "output", "cacheWrite", "cacheRead"] as const;

/** A dated snapshot's suffix: `-20250929` (Anthropic) or `-2025-08-07` (OpenAI). */
const DATED = /-(?:\d{8}|\d{4}-\d{2}-\d{2})$/;

/** Cents per million tokens of each kind, per model; null for a model the table does not list. */
const known = new Map<string, Rates | null>();

function tableRates(model: string): Rates | null {
  let rates = known.get(model);
  if (rates === undefined) {
    rates = null;
    const dollars = modelRates(model);
    if (dollars !== undefined) {
      const found = { ...ZERO };
      // Dollars to cents, rounded to a thousandth of a cent: 0.275 * 100 is 27.500000000000004.
      for (const kind of KINDS) found[kind] = Math.round(dollars[kind] * 100_000) / 1000;
      rates = found;
    }
    known.set(model, rates);
  }
  return rates;
}

/** A model's rates, under its own name or, for a dated snapshot, its alias's; null if unlisted. */
function ratesOf(model: string): Rates | null {
  return tableRates(model) ?? (DATED.test(model) ? tableRates(model.replace(DATED, "")) : null);
}

let highest: Rates | null = null;

/** The table's highest rate of each kind, which no listed model's price exceeds. */
function highestRates(): Rates {
  if (highest === null) {
    const most = { ...ZERO };
    for (const model of listedModels()) {
      const rates = tableRates(model)!;
      for (const kind of KINDS) most[kind] = Math.max(most[kind], rates[kind]);
    }
    highest = most;
  }
  return highest;
}

function centsAt(rates: Rates, tokens: TokenCounts): number {
  let perMillion = 0;
  for (const kind of KINDS) perMillion += tokens[kind] * rates[kind];
  return perMillion / MILLION;
}

/**
 * The price of `tokens` on `model` in cents, a fraction where it falls so; a dated snapshot
 * (`claude-sonnet-4-5-20250929`) at its alias's rates; null if the table lists neither.
 */
export function exactCents(model: string, tokens: TokenCounts): number | null {
  const rates = ratesOf(model);
  return rates === null ? null : centsAt(rates, tokens);
}

/**
 * What an answer is charged: its model's price (exactCents), else, for a model the table does not
 * list, the table's highest rate of each kind, so an unlisted model is never free nor cheaper than
 * a listed one. `listed` says which.
 */
export function chargedCents(
  models: { asked: string; answered: string | null },
  tokens: TokenCounts,
): { cents: number; listed: boolean } {
  const cents = exactCents(models.asked, tokens) ??
    (models.answered === null ? null : exactCents(models.answered, tokens));
  if (cents !== null) return { cents, listed: true };
  return { cents: centsAt(highestRates(), tokens), listed: false };
}
