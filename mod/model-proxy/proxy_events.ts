/**
 * What the model endpoint reports and is given: where a service is, the usage of an answer, a
 * refusal, the vault's redaction. Types only.
 */
import type { TextRedaction } from "../broker/mod.ts";
import type { TokenCounts } from "./answer_usage.ts";
import type { RefusalReason } from "./body_check.ts";
import type { Service } from "./routes.ts";

/** Where one service is, and its key in the vault as it is now (null: the vault has none). */
export interface ServiceTarget {
  /**
   * The service's origin, and any prefix before `/v1`: `https://api.openai.com`, not `…/v1`. The
   * request's own path (`/v1/responses`) and query are added to it.
   */
  baseUrl: string;
  key(): string | null;
}

/** The tokens one answer used, priced at the model's list rates (else the table's highest). */
export interface UsageEvent {
  service: Service;
  /** The model the request named, else the one the answer named. */
  model: string;
  /** US cents, an exact fraction where it falls so. */
  cents: number;
  /**
   * "listed": at the model's rates in mod/broker/prices.json (a dated snapshot at its alias's).
   * "highest": the table lists neither model named, so the table's highest rate of each kind.
   */
  rates: "listed" | "highest";
  tokens: TokenCounts;
  /** The path asked for (`/v1/messages`). */
  path: string;
  /** From the request's arrival to the answer's end, by the clock. */
  ms: number;
}

/** A request the endpoint refused because it asked the service to reach something. */
export interface ModelBlockedEvent {
  service: Service;
  path: string;
  reason: RefusalReason;
  /** Where in the body (`messages[1].content[0].source`); names keys, never values. */
  at: string;
}

/** The vault's redaction: of a whole text, and of one that arrives in pieces. */
export type AnswerRedaction = TextRedaction;
