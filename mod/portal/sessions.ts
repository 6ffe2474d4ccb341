/**
 * The owner's sessions, in memory: a login code is spent once, a session is a random id in an
 * HttpOnly, SameSite=Strict cookie with its own CSRF token. A restart of `gurt serve` ends every
 * session and voids every code issued before it.
 */
import { randomBytes } from "node:crypto";
import { openLoginCode } from "./owner_token.ts";

/** One signed-in owner. */
export interface Session {
  id: string;
  csrf: string;
  expires: number;
}

/** How long a login code and a session last. */
export const CODE_TTL_MS = 10 * 60 * 1000;
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** Why a login was refused, in words for the owner. */
export type LoginRefusal = "not_a_code" | "expired" | "spent";

/** The sessions and spent codes of one portal. */
export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #spent = new Map<string, number>();

  readonly startedAt: number;
  readonly clock: () => Date;

  /** A store for `token`; codes made before `startedAt` (ms) are refused. */
  constructor(readonly token: string, options: { startedAt: number; clock?: () => Date }) {
    this.startedAt = options.startedAt;
    this.clock = options.clock ?? (() => new Date());
  }

  /** Spends a one-time login code and opens a session, or says why not. */
  login(code: string): Session | LoginRefusal {
    const now = this.clock().getTime();
    this.#prune(now);
    const opened = openLoginCode(this.token, code);
    if (opened === null) return "not_a_code";
    if (opened.issued < this.startedAt - 1000 || now - opened.issued > CODE_TTL_MS) {
      return "expired";
    }
    if (opened.issued > now + 5000) return "not_a_code";
    if (this.#spent.has(opened.nonce)) return "spent";
    this.#spent.set(opened.nonce, opened.issued + CODE_TTL_MS);
    return this.open();
  }

  /** Opens a session (after a login code or the owner token itself). */
  open(): Session {
    const session: Session = {
      id: randomBytes(32).toString("base64url"),
      csrf: randomBytes(32).toString("base64url"),
      expires: this.clock().getTime() + SESSION_TTL_MS,
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id. */
  get(id: string | undefined): Session | undefined {
    if (id === undefined) return undefined;
    const session = this.#sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expires <= this.clock().getTime()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return session;
  }

  /** Ends a session. */
  end(id: string): void {
    this.#sessions.delete(id);
  }

  #prune(now: number): void {
    for (const [nonce, until] of this.#spent) if (until < now) this.#spent.delete(nonce);
    for (const [id, session] of this.#sessions) {
      if (session.expires <= now) this.#sessions.delete(id);
    }
  }
}
