/** The model services' hosts whose TLS the box answers itself, with its own CA's leaves. */

/** Which model service a host is. */
export type InterceptedService = "anthropic" | "openai" | "factory";

/** The hosts the box answers TLS for, and which service each is. */
export const INTERCEPTED_HOSTS: Readonly<Record<string, InterceptedService>> = Object.freeze({
  "api.anthropic.com": "anthropic",
  "api.openai.com": "openai",
  "api.factory.ai": "factory",
});

/** Whether `host` is, exactly, one of INTERCEPTED_HOSTS (never a name inherited by objects). */
export function isInterceptedHost(host: string): boolean {
  return Object.hasOwn(INTERCEPTED_HOSTS, host);
}
