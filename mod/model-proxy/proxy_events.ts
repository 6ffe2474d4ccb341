/**
 * What the model endpoint is given and reports: its options (where each service is, the vault's
 * redaction, the task's limits), the usage of an answer, a refusal; and the running endpoint's
 * face. Types only.
 */
import type { AdmitRefusal, AdmitRequest } from "./admission.ts";
import type { TextRedaction } from "../vault/mod.ts";
import type { OwnerPrices, PriceBasis, TokenCounts } from "./prices.ts";
import type { RefusalReason } from "./body_check.ts";
import type { Service } from "./routes.ts";
import type { ProviderTarget } from "./provider_routes.ts";

/** Where one service is, and its key in the vault as it is now (null: the vault has none). */
export interface ServiceTarget {
  /**
   * The service's origin, and any prefix before `/v1`: `https://api.openai.com`, not `…/v1`. The
   * request's own path (`/v1/responses`) and query are added to it.
   */
  baseUrl: string;
  key(): string | null;
}

/**
 * The tokens one answer used, priced at the owner's rates, else the model's list rates, else the
 * table's highest; or, for a provider whose prices are "reported", the cost it reported.
 */
export interface UsageEvent {
  service: Service;
  /** The owner's provider that answered ([models.providers.<name>]); absent: the built-in service. */
  provider?: string;
  /** The model the request named, else the one the answer named. */
  model: string;
  /** US cents, an exact fraction where it falls so (nanocents / 1e9). */
  cents: number;
  /** The exact price in billionths of a cent, a whole number. */
  nanocents: number;
  /**
   * "owner": at the owner's rates ([models.prices]). "listed": at the model's rates in
   * mod/model-proxy/prices.json (a dated snapshot at its alias's). "reported": the cost the
   * provider reported. "highest": no price for either model named, so the table's highest rates.
   */
  rates: PriceBasis;
  /**
   * A stream cut short before its end: "reported" charged the whole usage it had said, "bound"
   * the most it could cost (it had not said its whole usage). Absent: the answer ended.
   */
  cut?: "reported" | "bound";
  tokens: TokenCounts;
  /** The path asked for (`/v1/messages`). */
  path: string;
  /** From the request's arrival to the answer's end, by the clock. */
  ms: number;
  /** The request's hold (ModelEndpointOptions.holds), which this usage's charge settles. */
  hold?: string;
}

/** A request the endpoint refused because it asked the service to reach something. */
export interface ModelBlockedEvent {
  /** The service asked; "factory" for a request to api.factory.ai. */
  service: Service | "factory";
  path: string;
  /**
   * Why: a body's fetch, factory_path (a Factory path a task may not reach) or factory_session
   * (another session's path).
   */
  reason: RefusalReason | "factory_path" | "factory_session";
  /** Where in the body (`messages[1].content[0].source`); names keys, never values. */
  at: string;
  /** The base URL of the owner's provider the request was for; absent: the service's. */
  baseUrl?: string;
}

/** What a billed request's hold names (charge_holds.ts): the request, the most it may cost. */
export interface HoldRequest {
  service: Service;
  model: string | null;
  path: string;
  /** Whole cents. */
  cents: number;
}

/** Where the endpoint writes a billed request's hold before sending it, and settles one. */
export interface ChargeHolds {
  /** Writes the hold where it survives a crash; its id. Throws: the request is not sent (503). */
  open(request: HoldRequest): Promise<string>;
  /** Settles a hold whose request ended with no usage to charge. */
  close(hold: string): Promise<void>;
}

/** What serveModelEndpoint needs. */
export interface ModelEndpointOptions {
  /** The Unix socket to listen on; a stale socket there is replaced. */
  socketPath: string;
  services: { anthropic: ServiceTarget; openai: ServiceTarget };
  /**
   * The owner's providers: a request whose model names one (`<name>/<model>`) or one its `models`
   * lists goes there (provider_routes.ts) instead of to `services`. Not for a request that came to
   * a service's own host through the box's TLS (tunnelRequest, factoryRequest).
   */
  providers?: readonly ProviderTarget[];
  /** The owner's rates by model ([models.prices]), over the shipped table's. */
  prices?: OwnerPrices;
  /** Factory's API, for factoryRequest (absent: every Factory request is refused). */
  factory?: ServiceTarget;
  /**
   * The Factory sessions the task's worker has kept (its Droid session, resumed after a restart),
   * which its requests may reach besides those it made through this endpoint (none if absent).
   */
  factorySessions?: () => readonly string[];
  /** Told of each answer's usage: a whole answer's before it is sent, a stream's at its end. */
  onUsage(event: UsageEvent): Promise<void>;
  /** Told of each refusal before the client is answered (the caller writes net.blocked). */
  onBlocked(event: ModelBlockedEvent): Promise<void>;
  /**
   * The vault's redaction as it is now, applied to every answer: a whole one by redactWhole
   * (whole_redaction.ts) in its route's format (each text a client joins read as one; one it cannot
   * read so, not JSON say, is refused with 502), a stream's event by event by redactingAnswerStream
   * (stream_redaction.ts; likewise; an event it cannot read so ends the answer with an error event).
   */
  redaction?: () => TextRedaction;
  /** The largest request body, in bytes (20 MiB, the task's whole allowance). */
  maxBodyBytes?: number;
  /**
   * Draws a request body's bytes on the task's total since the core started (what its broker
   * requests draw on too): a sentence refuses the request (429), null lets it on.
   */
  drawBytes?: (count: number) => string | null;
  /**
   * Asked about each request the service would bill (Messages, Responses, Chat Completions) once
   * its body has passed the check and before anything is sent: null sends it, a refusal is answered
   * in the service's error format. It may wait (for the owner); `signal` aborts when the client
   * leaves or the endpoint closes, and the request then ends unsent. While it waits, the request
   * counts toward maxConcurrent.
   */
  admit?: (request: AdmitRequest, signal: AbortSignal) => Promise<AdmitRefusal | null>;
  /**
   * Whether the audit log can take a cost record now: false refuses every request before it is
   * sent (503, runbook.md#audit-unavailable), as every tool call is refused (always true if absent).
   */
  auditable?: () => boolean;
  /**
   * Where each billed request's hold is written before it is sent, and settled when it ends with
   * no usage (charge_holds.ts); a hold that cannot be written refuses the request (503). Absent:
   * no holds.
   */
  holds?: ChargeHolds;
  /** How many requests may be under way at once, streams until they end (4). */
  maxConcurrent?: number;
  /** How many connections may be open at once, and how long a head may take (mod/net's defaults). */
  doors?: { maxConnections: number; headerTimeoutMs: number };
  /**
   * The task's placeholder key. A request that came to a service's own host through the box's TLS
   * (tunnelRequest) has only a credential that is this placeholder replaced by the vault's key; any
   * other credential is the client's own and goes as it is.
   */
  placeholder?: string;
  /** Milliseconds, for UsageEvent.ms (Date.now). */
  clock?: () => number;
  /** Where the endpoint says what it cannot tell a client (a usage report that failed). */
  log?: (line: string) => void;
}

/** A running endpoint. */
export interface ModelEndpoint {
  readonly socketPath: string;
  /** Requests under way now, streams included until they end. */
  readonly active: number;
  /**
   * Answers a request that came to `service`'s own host (api.anthropic.com, api.openai.com)
   * through the box's TLS: relayed, checked and metered as the endpoint's own, but for the
   * credentials (see ModelEndpointOptions.placeholder) and a path of the other service's (404).
   */
  tunnelRequest(request: Request, service: Service): Promise<Response>;
  /**
   * Answers a request that came to api.factory.ai through the box's TLS (Droid's): a model path
   * relayed, checked and metered as tunnelRequest does, to [models] factory_base_url with the
   * vault's FACTORY_API_KEY in place of the placeholder; its settings, limits, session and
   * telemetry paths relayed as they are (answers redacted); any other path refused (403, reported).
   */
  factoryRequest(request: Request): Promise<Response>;
  /** Stops listening, ends every request under way and waits for their usage reports. */
  close(): Promise<void>;
}
