/**
 * A billed model request's hold (docs/audit.md#held-model-charges). Before the endpoint sends a
 * request the service bills, its holder writes down, durably, what the request is and the most it
 * may cost; the answer's UsageEvent names the hold, and the charge of that usage settles it; a
 * request that ends with no usage to charge (not sent, not billed) settles it with nothing. A hold
 * whose charge never reached the audit log is recovered as a charge at the next start. The holder
 * is ChargeHolds (proxy_events.ts); what is here is pure.
 */
import { cutShort } from "./answer_usage.ts";
import { usageEvent, type UsageOf } from "./usage_event.ts";
import type { OwnerPrices } from "./prices.ts";

/**
 * The whole cents a request may cost at most: as a stream cut before it said its usage is charged
 * (cutShort), its body's bytes as input and its most output (`most`, all choices), rounded up.
 */
export function mostCents(
  usageOf: UsageOf,
  limits: { bodyBytes: number; most: number },
  owner?: OwnerPrices,
): number {
  const usage = cutShort({ model: null, tokens: null }, limits);
  const event = usageEvent(usageOf, usage, usageOf.started, { owner });
  return Math.ceil((event?.cents ?? 0) - 1e-9);
}

/** The sentence for a request not sent because its hold could not be written. */
export function holdUnwrittenMessage(cause: string): string {
  return `gurt model endpoint: the box could not write down this request's cost before sending it (${cause}), so it was not sent; free space on the box home's disk. see runbook.md#disk-full`;
}
