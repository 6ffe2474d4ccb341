/**
 * The usage report of one answer: its tokens priced (prices.ts's chargedCents) under the model the
 * request named, else the one the answer named, with the time from the request's arrival. Pure.
 */
import type { AnswerUsage } from "./answer_usage.ts";
import { chargedCents } from "./prices.ts";
import type { UsageEvent } from "./proxy_events.ts";
import type { Route, Service } from "./routes.ts";

/** What a usage report needs of its request. */
export interface UsageOf {
  service: Service;
  kind: NonNullable<Route["kind"]>;
  model: string | null;
  /** The owner's provider the request went to, if not a built-in service. */
  provider?: string;
  path: string;
  /** When the request arrived, by the endpoint's clock. */
  started: number;
}

/** The report of `usage`, the usage of an answer to `usageOf`, at `now`; null if it said none. */
export function usageEvent(usageOf: UsageOf, usage: AnswerUsage, now: number): UsageEvent | null {
  const tokens = usage.tokens;
  if (tokens === null) return null;
  const model = usageOf.model ?? usage.model ?? "";
  const price = chargedCents({ asked: model, answered: usage.model }, tokens);
  return {
    service: usageOf.service,
    ...(usageOf.provider === undefined ? {} : { provider: usageOf.provider }),
    model,
    cents: price.cents,
    rates: price.listed ? "listed" : "highest",
    tokens,
    path: usageOf.path,
    ms: now - usageOf.started,
  };
}
