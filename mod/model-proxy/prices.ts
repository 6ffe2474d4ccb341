/**
 * The box's one price of model tokens: the owner's rates ([models.prices], over the table's), else
 * a model's list rates from prices.json (dollars per million tokens), a dated snapshot
 * (`claude-sonnet-4-5-20250929`, `gpt-5-2025-08-07`) at its alias's, else the table's highest.
 * Every rate is a whole number of thousandths of a cent per million tokens (gpt-5-nano's cached
 * input is $0.005, half a cent; the owner's are checked so), which is a billionth of a cent per
 * token: a price is a whole number of billionths of a cent (chargedNanocents), exact. A cost a
 * provider reports in dollars is turned into the same unit (reportedNanocents).
 *
 * Where the rounding is: nothing here rounds but a reported cost past eleven decimals of a dollar.
 * The model endpoint charges those billionths and a task's meter (mod/core/task_model.ts) charges
 * whole cents as they add up; `POST /usage` rounds each report up to a whole cent at its call site
 * (mod/broker/task_routes.ts). Both price the same tokens of the same model, under the same names.
 * Pure.
 */
import prices from "./prices.json" with { type: "json" };

/** Tokens of each kind the table prices: one answer's, or one `/usage` report's. */
export interface TokenCounts {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

/** Thousandths of a cent per million tokens of each kind, whole numbers. */
type Rates = TokenCounts;

const KINDS = ["input", "output", "cacheWrite", "cacheRead"] as const;
/** Tokens times a rate in thousandths of a cent per million tokens, to cents. */
const PER_CENT = 1000 * 1_000_000;

/** A dated snapshot's suffix: `-20250929` (Anthropic) or `-2025-08-07` (OpenAI). */
const DATED = /-(?:\d{8}|\d{4}-\d{2}-\d{2})$/;

const table: Record<string, TokenCounts> = prices.models;

/** Each listed model's rates, read once. */
const known = new Map<string, Rates>();

function tableRates(model: string): Rates | null {
  if (!Object.hasOwn(table, model)) return null;
  let rates = known.get(model);
  if (rates === undefined) {
    const dollars = table[model];
    const found: Rates = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
    // Dollars to thousandths of a cent: 0.275 * 100_000 is 27500.000000000004.
    for (const kind of KINDS) found[kind] = Math.round(dollars[kind] * 100_000);
    known.set(model, rates = found);
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
    const most: Rates = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
    for (const model of Object.keys(table)) {
      const rates = tableRates(model)!;
      for (const kind of KINDS) most[kind] = Math.max(most[kind], rates[kind]);
    }
    highest = most;
  }
  return highest;
}

function centsAt(rates: Rates, tokens: TokenCounts): number {
  let units = 0;
  for (const kind of KINDS) units += tokens[kind] * rates[kind];
  return units / PER_CENT;
}

/**
 * The price of `tokens` on `model` in US cents, a fraction where it falls so; a dated snapshot at
 * its alias's rates; null if the table lists neither.
 */
export function exactCents(model: string, tokens: TokenCounts): number | null {
  const rates = ratesOf(model);
  return rates === null ? null : centsAt(rates, tokens);
}

/** A price in billionths of a cent (the unit of rates times tokens): a whole number. */
export const NANOCENTS_PER_CENT = PER_CENT;

/** The owner's rates by model ([models.prices]), dollars per million tokens. */
export type OwnerPrices = Readonly<Record<string, TokenCounts>>;

/**
 * Where an answer's price came from: "owner" ([models.prices]), "listed" (prices.json), "reported"
 * (the provider's own cost), "highest" (no price for the model: the table's highest rates).
 */
export type PriceBasis = "owner" | "listed" | "reported" | "highest";

function ownerRates(owner: OwnerPrices | undefined, model: string): Rates | null {
  if (owner === undefined || !Object.hasOwn(owner, model)) return null;
  const dollars = owner[model];
  const found: Rates = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
  for (const kind of KINDS) found[kind] = Math.round(dollars[kind] * 100_000);
  return found;
}

function unitsAt(rates: Rates, tokens: TokenCounts): number {
  let units = 0;
  for (const kind of KINDS) units += tokens[kind] * rates[kind];
  return units;
}

/** The rates of the first of `names` the owner prices, else the first the table lists. */
function ratesFor(
  names: readonly string[],
  owner: OwnerPrices | undefined,
): { rates: Rates; basis: "owner" | "listed" } | null {
  for (const name of names) {
    const rates = ownerRates(owner, name);
    if (rates !== null) return { rates, basis: "owner" };
  }
  for (const name of names) {
    const rates = ratesOf(name);
    if (rates !== null) return { rates, basis: "listed" };
  }
  return null;
}

/**
 * What the model endpoint charges an answer, in billionths of a cent: the owner's rates for the
 * first of `names` they price (the model as the task named it, as its provider was sent it, as the
 * answer named it), else the table's, else the table's highest rate of each kind, so a model with
 * no price is never free nor cheaper than a listed one.
 */
export function chargedNanocents(
  names: readonly string[],
  tokens: TokenCounts,
  owner?: OwnerPrices,
): { nanocents: number; basis: Exclude<PriceBasis, "reported"> } {
  const found = ratesFor(names, owner);
  if (found !== null) return { nanocents: unitsAt(found.rates, tokens), basis: found.basis };
  return { nanocents: unitsAt(highestRates(), tokens), basis: "highest" };
}

/** Whether the owner prices the first of `names` priced at 0 for every kind of token. */
export function ownerFree(names: readonly string[], owner: OwnerPrices | undefined): boolean {
  const found = ratesFor(names, owner);
  return found !== null && found.basis === "owner" &&
    KINDS.every((kind) => found.rates[kind] === 0);
}

/** A cost a provider reported in US dollars, in billionths of a cent; null if it is no cost. */
export function reportedNanocents(dollars: unknown): number | null {
  const value = typeof dollars === "string" && dollars.trim() !== "" ? Number(dollars) : dollars;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1e6) return null;
  // Dollars to billionths of a cent: eleven decimals of a dollar, rounded there only.
  return Math.round(value * 100 * PER_CENT);
}

/**
 * The price of `tokens` at the table's rates for the model asked, else the one that answered,
 * else the table's highest (chargedNanocents without the owner's rates), in cents; `listed` says
 * whether the table priced it.
 */
export function chargedCents(
  models: { asked: string; answered: string | null },
  tokens: TokenCounts,
): { cents: number; listed: boolean } {
  const names = models.answered === null ? [models.asked] : [models.asked, models.answered];
  const price = chargedNanocents(names, tokens);
  return { cents: price.nanocents / PER_CENT, listed: price.basis === "listed" };
}
