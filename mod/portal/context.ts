/** What the portal's middleware tells its handlers, and the one error type its handlers throw. */
import type { Session } from "./sessions.ts";

/** The Hono environment of the portal's app. */
export type PortalEnv = {
  Variables: {
    /** The owner's browser session, or null for a request with the owner token. */
    session: Session | null;
    /** This portal's own origin as the browser sees it, such as `http://127.0.0.1:7780`. */
    origin: string;
  };
};

/** A refusal or failure the portal shows the owner: a status and a sentence. */
export class PortalError extends Error {
  constructor(readonly status: 400 | 401 | 403 | 404 | 421 | 503, message: string) {
    super(message);
    this.name = "PortalError";
  }
}

/** The session cookie's name. */
export const SESSION_COOKIE = "gurt_session";
