/**
 * The usage report of one answer: its tokens priced, or its provider's own reported cost charged,
 * under the model the request named, else the one the answer named, with the time from the
 * request's arrival. Pure.
 */
import type { AnswerUsage } from "./answer_usage.ts";
import { chargedNanocents, NANOCENTS_PER_CENT, type OwnerPrices } from "./prices.ts";
import type { UsageEvent } from "./proxy_events.ts";
import type { Route, Service } from "./routes.ts";

/** What a usage report needs of its request. */
export interface UsageOf {
  service: Service;
  kind: NonNullable<Route["kind"]>;
  model: string | null;
  /** The owner's provider the request went to, if not a built-in service. */
  provider?: string;
  /** The model as its provider was sent it (without the provider's name), when it differs. */
  sentModel?: string;
  /** The provider's answers are charged the cost they report (`prices = "reported"`). */
  reported?: boolean;
  path: string;
  /** When the request arrived, by the endpoint's clock. */
  started: number;
}

/** How an answer is priced besides its usage: the owner's rates, and how its stream ended. */
export interface PricedAs {
  owner?: OwnerPrices;
  /** A stream cut short: charged its reported (whole) usage, or the most it could cost. */
  cut?: "reported" | "bound";
}

/** The names an answer's price is looked up under, in order. */
export function priceNames(usageOf: UsageOf, answered: string | null): string[] {
  const names: string[] = [];
  for (const name of [usageOf.model, usageOf.sentModel, answered]) {
    if (typeof name === "string" && name !== "" && !names.includes(name)) names.push(name);
  }
  return names;
}

/** The report of `usage`, the usage of an answer to `usageOf`, at `now`; null if it said none. */
export function usageEvent(
  usageOf: UsageOf,
  usage: AnswerUsage,
  now: number,
  priced: PricedAs = {},
): UsageEvent | null {
  const tokens = usage.tokens;
  if (tokens === null) return null;
  const model = usageOf.model ?? usage.model ?? "";
  const reported = usageOf.reported === true ? usage.reported ?? null : null;
  const price = reported !== null
    ? { nanocents: reported, basis: "reported" as const }
    : chargedNanocents(priceNames(usageOf, usage.model), tokens, priced.owner);
  return {
    service: usageOf.service,
    ...(usageOf.provider === undefined ? {} : { provider: usageOf.provider }),
    model,
    cents: price.nanocents / NANOCENTS_PER_CENT,
    nanocents: price.nanocents,
    rates: price.basis,
    tokens,
    path: usageOf.path,
    ms: now - usageOf.started,
    ...(priced.cut === undefined ? {} : { cut: priced.cut }),
  };
}
