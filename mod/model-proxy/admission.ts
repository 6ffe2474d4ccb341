/**
 * What the endpoint asks its caller before it sends a request the service would bill (the core
 * holds a task's model requests over its budget for the owner), and how a refusal is answered: in
 * the service's own error format. Pure.
 */
import type { Service } from "./routes.ts";
import { errorAnswer } from "./service_errors.ts";

/** A request the service would bill, as the endpoint asks `admit` about it before sending it. */
export interface AdmitRequest {
  service: Service;
  /** The model the body names (null when it names none). */
  model: string | null;
  /** The path asked for (`/v1/messages`). */
  path: string;
}

/**
 * Why `admit` keeps a request from the service: 403, refused (the owner said no); 429, not yet (an
 * SDK tries again by itself). The message ends with its runbook pointer.
 */
export interface AdmitRefusal {
  status: 403 | 429;
  message: string;
}

/** The answer to a request `admit` kept from the service. */
export function admitAnswer(service: Service, refusal: AdmitRefusal): Response {
  const error = refusal.status === 403 ? "owner_refused" : "owner_waiting";
  return errorAnswer(service, { error, message: refusal.message });
}
