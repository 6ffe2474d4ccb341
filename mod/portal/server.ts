/**
 * The portal's server: the owner API and pages on loopback TCP (`[portal] listen`), every read and
 * every act through the admin socket. It holds no file of the box home: whoever starts it gives it
 * the owner token and writes its bound address where `gurt portal` reads it.
 */
import { AdminClient } from "../admin/mod.ts";
import { parseListenAddress } from "../config/mod.ts";
import { portalApp } from "./app.tsx";
import { ApprovalWatch } from "./approval_watch.ts";
import { allowedHosts } from "./guard.ts";
import { LiveStreams } from "./live_events.ts";
import { SessionStore } from "./sessions.ts";
import { type GuardedServer, serveGuarded } from "../net/mod.ts";

/** How many connections the portal may have open at once: the owner's pages and live streams. */
const PORTAL_CONNECTIONS = 256;

/** How a portal is started. */
export interface PortalOptions {
  /** `host:port` on loopback; port 0 picks a free port. */
  listen: string;
  /** The admin socket every page and the owner API go through. */
  socket: string;
  /** The owner token (`<home>/portal/owner.token`). */
  token: string;
  /** Where the portal's log lines go; stderr by default. */
  log?: (line: string) => void;
  /** The clock of sessions and pages; the real one by default. */
  clock?: () => Date;
  /** How long a browser may take to send a request's head (mod/net's default, 10 s). */
  headerTimeoutMs?: number;
}

/** A running portal. */
export interface Portal {
  /** The bound address, `127.0.0.1:7780`. */
  readonly addr: string;
  /** The origin pages are served at, `http://127.0.0.1:7780`. */
  readonly origin: string;
  /** The sessions (tests open one directly). */
  readonly store: SessionStore;
  /** Stops answering. */
  close(): Promise<void>;
}

/** The portal could not listen on its address (taken, or not this machine's). */
export class PortalListenError extends Error {
  override name = "PortalListenError";
}

/** The exit status of `gurt portal-serve` when it cannot listen: the core reads it so. */
export const PORTAL_CANNOT_LISTEN = 3;

/** Splits `127.0.0.1:7780` or `[::1]:7780` into host and port. */
export function parseListen(listen: string): { hostname: string; port: number } {
  const parsed = parseListenAddress(listen);
  if ("problem" in parsed) {
    throw new Error(
      `[portal] listen = ${
        JSON.stringify(listen)
      } ${parsed.problem}; see runbook.md#config-invalid`,
    );
  }
  return parsed;
}

/** Starts the portal; throws with a runbook pointer if it cannot listen. */
export async function startPortal(options: PortalOptions): Promise<Portal> {
  const { hostname, port } = parseListen(options.listen);
  const log = options.log ?? ((line: string) => console.error(line));
  const clock = options.clock ?? (() => new Date());
  const store = new SessionStore(options.token, { startedAt: clock().getTime(), clock });
  const admin = new AdminClient(options.socket);
  const streams = new LiveStreams();
  const approvals = new ApprovalWatch(admin, { log });
  const hosts = new Set<string>();
  const app = portalApp({ admin, store, hosts, streams, approvals, log, clock });
  let server: GuardedServer;
  try {
    server = serveGuarded({ hostname, port }, (request) => app.fetch(request), {
      name: "the portal",
      maxConnections: PORTAL_CONNECTIONS,
      headerTimeoutMs: options.headerTimeoutMs,
      log,
      onError: (error) => {
        log(`gurt portal: a request failed: ${(error as Error).message}`);
        return new Response("the portal failed", { status: 500 });
      },
    });
  } catch (error) {
    throw new PortalListenError(
      `the portal cannot listen on ${options.listen}: ${(error as Error).message}; ` +
        "see runbook.md#portal-listen-failed",
    );
  }
  const bound = server.addr as Deno.NetAddr;
  for (const host of allowedHosts(hostname, bound.port)) hosts.add(host);
  const addr = `${hostname.includes(":") ? `[${hostname}]` : hostname}:${bound.port}`;
  // The guarded server listens at once; the portal stays async for its callers.
  return await Promise.resolve({
    addr,
    origin: `http://${addr}`,
    store,
    async close() {
      approvals.close();
      streams.closeAll();
      await server.shutdown();
    },
  });
}
