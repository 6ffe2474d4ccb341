/**
 * The owner's portal: the owner API and web pages on loopback TCP behind an owner login (one-time
 * links from `gurt portal`, session cookies, CSRF checks, a strict CSP).
 */
export { type AdminFetch, adminPathOf } from "./admin_client.ts";
export { ensureOwnerToken, loginCode, readOwnerToken } from "./owner_token.ts";
export { loginLink } from "./link.ts";
export { parseListen, type Portal, type PortalOptions, startPortal } from "./server.ts";
export { SESSION_COOKIE } from "./context.ts";
export { CODE_TTL_MS, SESSION_TTL_MS, SessionStore } from "./sessions.ts";
