/**
 * A task's model endpoint: the model services' own wire formats (Anthropic Messages, OpenAI
 * Responses and Chat Completions) in plain HTTP on one Unix socket, with the vault's key put on each
 * request in place of the task's placeholder, every request that would make the service fetch
 * something for the task refused, and every answer's usage priced and reported.
 */
export type { AdmitRefusal, AdmitRequest } from "./admission.ts";
export { serveModelEndpoint } from "./model_proxy_server.ts";
export type {
  ChargeHolds,
  HoldRequest,
  ModelBlockedEvent,
  ModelEndpoint,
  ModelEndpointOptions,
  ServiceTarget,
  UsageEvent,
} from "./proxy_events.ts";
export { type ProviderApi, providerOf, type ProviderTarget } from "./provider_routes.ts";
export {
  chargedNanocents,
  exactCents,
  type OwnerPrices,
  type PriceBasis,
  type TokenCounts,
} from "./prices.ts";
export { findRefusal, type Refusal, type RefusalReason } from "./body_check.ts";
export { type Service } from "./routes.ts";
export { KEY_NAMES, noKeyMessage } from "./service_errors.ts";
export { answerHeaders } from "./relay_headers.ts";
