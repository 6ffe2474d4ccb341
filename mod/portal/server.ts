/**
 * The portal's server: the owner API and pages on loopback TCP (`[portal] listen`). It writes the
 * owner token on first start and the bound address to `<home>/run/portal.addr`.
 */
import type { BrokerDeps } from "../broker/mod.ts";
import { portalAddrPath } from "../config/mod.ts";
import type { AdminFetch } from "./admin_client.ts";
import { portalApp } from "./app.tsx";
import { allowedHosts } from "./guard.ts";
import { LiveStreams } from "./live_events.ts";
import { ensureOwnerToken } from "./owner_token.ts";
import { SessionStore } from "./sessions.ts";

/** How a portal is started. */
export interface PortalOptions {
  /** `host:port` on loopback; port 0 picks a free port. */
  listen: string;
  /** The admin handlers the owner API and the pages use (`adminRoutes(...).fetch`). */
  admin: AdminFetch;
}

/** A running portal. */
export interface Portal {
  /** The bound address, `127.0.0.1:7780`. */
  readonly addr: string;
  /** The origin pages are served at, `http://127.0.0.1:7780`. */
  readonly origin: string;
  /** The sessions (tests open one directly). */
  readonly store: SessionStore;
  /** Stops answering and removes the address file. */
  close(): Promise<void>;
}

/** Splits `127.0.0.1:7780` or `[::1]:7780` into host and port. */
export function parseListen(listen: string): { hostname: string; port: number } {
  const match = /^\[?([^\]]+)\]?:(\d{1,5})$/.exec(listen);
  if (match === null || Number(match[2]) > 65535) {
    throw new Error(`[portal] listen = ${JSON.stringify(listen)} is not host:port`);
  }
  return { hostname: match[1], port: Number(match[2]) };
}

/** Starts the portal for a core; throws with a runbook pointer if it cannot listen. */
export async function startPortal(deps: BrokerDeps, options: PortalOptions): Promise<Portal> {
  const token = await ensureOwnerToken(deps.home);
  const { hostname, port } = parseListen(options.listen);
  const store = new SessionStore(token, { startedAt: deps.clock().getTime(), clock: deps.clock });
  const streams = new LiveStreams();
  const hosts = new Set<string>();
  const app = portalApp({ deps, admin: options.admin, store, hosts, streams });
  const listening = Promise.withResolvers<Deno.NetAddr>();
  let server: Deno.HttpServer;
  try {
    server = Deno.serve({
      hostname,
      port,
      onListen: (addr) => listening.resolve(addr as Deno.NetAddr),
      onError: (error) => {
        deps.log(`gurt portal: a request failed: ${(error as Error).message}`);
        return new Response("the portal failed", { status: 500 });
      },
    }, (request) => app.fetch(request));
  } catch (error) {
    throw new Error(
      `the portal cannot listen on ${options.listen}: ${(error as Error).message}; ` +
        "see runbook.md#portal-listen-failed",
    );
  }
  const bound = await listening.promise;
  for (const host of allowedHosts(hostname, bound.port)) hosts.add(host);
  const addr = `${hostname.includes(":") ? `[${hostname}]` : hostname}:${bound.port}`;
  const addrFile = portalAddrPath(deps.home);
  await Deno.writeTextFile(addrFile, `${addr}\n`, { mode: 0o644 });
  return {
    addr,
    origin: `http://${addr}`,
    store,
    async close() {
      streams.closeAll();
      await server.shutdown();
      await Deno.remove(addrFile).catch(() => {});
    },
  };
}
