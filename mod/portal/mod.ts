/**
 * The owner's portal: the owner API and web pages on loopback TCP behind an owner login (one-time
 * links from `gurt portal`, session cookies, CSRF checks, a strict CSP). It runs as its own role
 * and process (`gurt portal-serve`, entry portal_main.ts), started and watched by `gurt serve`,
 * and reaches the core only over the admin socket.
 */
export { adminPathOf } from "./owner_api.ts";
export { ensureOwnerToken, loginCode, readOwnerToken } from "./owner_token.ts";
export { loginLink } from "./link.ts";
export {
  parseListen,
  type Portal,
  PORTAL_CANNOT_LISTEN,
  PortalListenError,
  type PortalOptions,
  startPortal,
} from "./server.ts";
export type { ListeningLine, PortalArgs } from "./portal_main.ts";
export { SESSION_COOKIE } from "./context.ts";
export { CODE_TTL_MS, SESSION_TTL_MS, SessionStore } from "./sessions.ts";
