/**
 * The laptop's end (`gurt egress-tunnel`, docs/egress-tunnel.md#the-client): dials the guest's
 * WebSocket with the token, attaches, and opens each host:port the guest asks for from this
 * machine's network, within its allow list; one line per connection; reconnects with a growing
 * pause.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { type Limits, PROTOCOL, ResetCode, targetOf } from "./frames.ts";
import { Mux } from "./mux.ts";
import { dialWs } from "./ws_conn.ts";

/** The largest WebSocket message the client takes: a DATA frame of the largest size, and room. */
const MAX_MESSAGE = 1024 * 1024;

interface OpenLine {
  name: string;
  address: string;
  started: number;
}

/** How the client is run. */
export interface ClientOptions {
  ws: string;
  token: string;
  /** Hosts, `*.suffix`, IPv4 addresses or CIDRs; empty: any public host. */
  allow: string[];
  /** Refuse private and loopback addresses even when listed. */
  denyPrivate: boolean;
  log?: (line: string) => void;
  /** Stops the client. */
  signal?: AbortSignal;
}

/** Whether an address is private, loopback, link-local or otherwise not of the public internet. */
export function isPrivateAddress(address: string): boolean {
  if (isIP(address) === 4) {
    const [a, b] = address.split(".").map(Number);
    return a === 0 || a === 10 || a === 127 || a >= 224 || (a === 100 && b >= 64 && b < 128) ||
      (a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168);
  }
  const v6 = address.toLowerCase();
  if (v6.startsWith("::ffff:")) return isPrivateAddress(v6.slice(7));
  return v6 === "::1" || v6 === "::" || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) ||
    v6.startsWith("ff");
}

/** Whether the allow list names this host or address. */
export function listed(allow: string[], host: string, address: string): boolean {
  return allow.some((entry) => {
    const item = entry.toLowerCase();
    if (item.startsWith("*.")) return host.endsWith(item.slice(1));
    const cidr = /^(\d+\.\d+\.\d+\.\d+)\/(\d{1,2})$/.exec(item);
    if (cidr && isIP(address) === 4) {
      const bits = Number(cidr[2]);
      const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
      return ((v4(cidr[1]) & mask) >>> 0) === ((v4(address) & mask) >>> 0);
    }
    return item === host || item === address;
  });
}

function v4(address: string): number {
  return address.split(".").reduce((sum, part) => sum * 256 + Number(part), 0) >>> 0;
}

/** Where a host may be reached: an address to connect to, or why not. */
export async function decide(
  options: Pick<ClientOptions, "allow" | "denyPrivate">,
  host: string,
): Promise<{ address: string } | { refused: string }> {
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return { refused: `${host} does not resolve here` };
  }
  for (const address of addresses) {
    const named = listed(options.allow, host, address);
    if (options.allow.length > 0 && !named) continue;
    if (isPrivateAddress(address) && (options.denyPrivate || !named)) continue;
    return { address };
  }
  return {
    refused: options.allow.length > 0 && !addresses.some((a) => listed(options.allow, host, a))
      ? `${host} is not in --allow`
      : `${host} is a private or loopback address of this network (${
        addresses[0]
      }), not in --allow`,
  };
}

/** Runs until the signal aborts: attach, serve, and on loss reconnect after 1, 2, 4 … 30 s. */
export async function runClient(options: ClientOptions): Promise<void> {
  const log = options.log ?? ((line) => console.error(line));
  let pause = 1000;
  while (!options.signal?.aborted) {
    const attached = await attachOnce(options, log);
    if (options.signal?.aborted) return;
    if (attached) pause = 1000;
    log(`egress-tunnel: reconnecting in ${pause / 1000} s`);
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, pause);
      options.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
    pause = Math.min(pause * 2, 30_000);
  }
}

/** One connection: resolves when it ends, true when it had attached. */
async function attachOnce(options: ClientOptions, log: (line: string) => void): Promise<boolean> {
  let dialed;
  try {
    // The token rides on the upgrade, never in the URL.
    dialed = await dialWs(options.ws, { authorization: `Bearer ${options.token}` }, MAX_MESSAGE);
  } catch (error) {
    log(cannotAttach(options.ws, (error as Error).message));
    return false;
  }
  if (!dialed.ok) {
    log(cannotAttach(options.ws, dialed.reason));
    return false;
  }
  const socket = dialed.ws;
  return await new Promise((resolve) => {
    let mux: Mux | null = null;
    const stop = () => socket.close(1000, "the client is stopping");
    options.signal?.addEventListener("abort", stop);
    socket.send(JSON.stringify({ type: "hello", protocol: PROTOCOL, client: "gurt" }));
    socket.onmessage = (data) => {
      if (mux !== null) {
        if (typeof data !== "string") mux.receive(data);
        return;
      }
      const welcome = parseWelcome(data);
      if (welcome === null) {
        log(cannotAttach(options.ws, `the guest answered ${String(data).slice(0, 200)}`));
        socket.close(1002, "no welcome");
        return;
      }
      log(
        `egress-tunnel: attached to ${options.ws}${
          welcome.replaced ? " (replacing an earlier client)" : ""
        }`,
      );
      const lines = new Map<number, OpenLine>();
      mux = new Mux(socket, welcome.limits, {
        onOpen: (id, frame) => open(mux!, id, targetOf(frame), options, log, lines),
        onStreamEnd: (end) => {
          const line = lines.get(end.id);
          lines.delete(end.id);
          if (!line) return;
          const ms = Math.round(performance.now() - line.started);
          log(
            `egress-tunnel: stream ${end.id} ${line.name} (${line.address}) sent ${end.received} B, ` +
              `received ${end.sent} B, ${ms} ms${end.reset ? `, reset: ${end.reset.reason}` : ""}`,
          );
        },
      }, false);
    };
    socket.onclose = (code, reason) => {
      options.signal?.removeEventListener("abort", stop);
      if (mux === null) {
        log(cannotAttach(options.ws, reason || `the guest closed the connection (${code})`));
        resolve(false);
        return;
      }
      mux.close(1000, "closed");
      log(`egress-tunnel: detached (${reason || `code ${code}`})`);
      resolve(true);
    };
  });
}

function parseWelcome(data: unknown): { limits: Limits; replaced: boolean } | null {
  if (typeof data !== "string") return null;
  try {
    const value = JSON.parse(data);
    if (value.type !== "welcome" || value.protocol !== PROTOCOL) return null;
    return { limits: value.limits, replaced: value.replaced === true };
  } catch {
    return null;
  }
}

async function open(
  mux: Mux,
  id: number,
  target: { host: string; port: number } | null,
  options: ClientOptions,
  log: (line: string) => void,
  lines: Map<number, OpenLine>,
): Promise<void> {
  if (target === null) return mux.reset(id, ResetCode.PROTOCOL, "OPEN is not host:port");
  const started = performance.now();
  const where = await decide(options, target.host);
  const name = `${target.host}:${target.port}`;
  if ("refused" in where) {
    log(`egress-tunnel: refused ${name}: ${where.refused}`);
    return mux.reset(id, ResetCode.REFUSED, `the laptop refused ${name}: ${where.refused}`);
  }
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: where.address, port: target.port });
    conn.setNoDelay(true);
  } catch (error) {
    log(`egress-tunnel: ${name} unreachable (${(error as Error).message})`);
    return mux.reset(id, ResetCode.UNREACHABLE, `${name} is unreachable from the laptop`);
  }
  lines.set(id, { name, address: where.address, started });
  mux.accept(id, conn);
}

function cannotAttach(url: string, why: string): string {
  return `egress-tunnel: cannot attach to ${url}: ${why}; see runbook.md#egress-tunnel-cannot-attach`;
}
