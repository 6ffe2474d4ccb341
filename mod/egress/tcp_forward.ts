/**
 * A TCP forward: a Unix socket whose every connection the core relays to one fixed `host:port`,
 * for a client that speaks a protocol of its own and no proxy (a database driver). An app's
 * manifest lists it in `ports`; the task init opens it on the app's loopback at the same port.
 * Each connection is admitted as the egress proxy admits one: the name resolved by the core (the
 * policy's resolve map, else DNS), never a metadata address, and a loopback, private, link-local or
 * the box's own address only for a host in the policy's allowPrivate ([egress]
 * allow_private_hosts). A refusal is told to onBlocked and the connection closed.
 */
import { type CanonicalHost, canonicalHost } from "../config/mod.ts";
import { acceptConnections } from "../net/mod.ts";
import { closeQuietly, pump } from "./byte_streams.ts";
import {
  addressRefusal,
  type EgressPolicy,
  privateAllowed,
  resolvedByPolicy,
} from "./host_policy.ts";
import type { BlockedEvent, EgressServer } from "./egress_options.ts";

/** What serveForward needs. */
export interface ForwardOptions {
  /** The Unix socket to listen on (0600); a stale socket there is replaced. */
  socketPath: string;
  /** Where every connection goes: a name or an IP address, and a port. */
  host: string;
  port: number;
  /** The policy whose allowPrivate and resolve apply; read for every connection. */
  policy(): EgressPolicy;
  /** The box's own addresses; a throw refuses every address that is not allowed private. */
  ownAddresses(): string[];
  /** Told of every refusal before the connection is closed. */
  onBlocked(event: BlockedEvent): Promise<void>;
  /** Connections open at once (64, the task init's own cap per door). */
  maxConnections?: number;
  /** How long resolving and dialling may each take (10 s). */
  connectTimeoutMs?: number;
}

/** Opens a TCP forward on its socket. */
export async function serveForward(options: ForwardOptions): Promise<EgressServer> {
  const target = canonicalHost(options.host);
  if ("problem" in target) throw new Error(`${options.host} ${target.problem}`);
  try {
    if ((await Deno.lstat(options.socketPath)).isSocket) await Deno.remove(options.socketPath);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const listener = Deno.listen({ transport: "unix", path: options.socketPath });
  await Deno.chmod(options.socketPath, 0o600);
  return new Forward(listener, target, options);
}

class Forward implements EgressServer {
  readonly #conns = new Set<Deno.Conn>();
  readonly #handlers = new Set<Promise<void>>();
  #closed = false;
  readonly #accepting: Promise<void>;

  constructor(
    readonly listener: Deno.Listener,
    readonly target: CanonicalHost,
    readonly options: ForwardOptions,
  ) {
    this.#accepting = acceptConnections(listener, {
      name: `the TCP forward to ${options.host}:${options.port}`,
      stopped: () => this.#closed,
      take: (conn) => {
        const handler = this.#handle(conn);
        this.#handlers.add(handler);
        handler.finally(() => this.#handlers.delete(handler));
      },
    });
  }

  get socketPath(): string {
    return this.options.socketPath;
  }

  /** Client connections open now (each relayed one counts twice: client and origin). */
  get connections(): number {
    return this.#conns.size;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.listener.close();
    } catch {
      // Already closed.
    }
    for (const conn of this.#conns) closeQuietly(conn);
    await this.#accepting;
    await Promise.allSettled([...this.#handlers]);
    await Deno.remove(this.options.socketPath).catch(() => {});
  }

  async #handle(client: Deno.Conn): Promise<void> {
    this.#conns.add(client);
    let origin: Deno.Conn | null = null;
    try {
      if (this.#conns.size > (this.options.maxConnections ?? 64)) return;
      const admitted = await this.#admit();
      if ("reason" in admitted) {
        await this.#blocked(admitted.reason);
        return;
      }
      origin = await this.#dial(admitted.addresses);
      if (origin === null) return;
      const back = pump(origin, client);
      await pump(client, origin);
      await back;
    } finally {
      for (const conn of origin === null ? [client] : [client, origin]) {
        this.#conns.delete(conn);
        closeQuietly(conn);
      }
    }
  }

  async #admit(): Promise<{ addresses: string[] } | { reason: BlockedEvent["reason"] }> {
    let policy: EgressPolicy;
    try {
      policy = this.options.policy();
    } catch {
      return { reason: "not_listed" };
    }
    const addresses = this.target.kind === "ip"
      ? [this.target.host]
      : await this.#resolve(policy, this.target);
    if (addresses.length === 0) return { reason: "resolve_failed" };
    let own: string[] | null;
    try {
      own = this.options.ownAddresses();
    } catch {
      own = null;
    }
    const privateOk = privateAllowed(policy, this.target);
    const refusal = addressRefusal(addresses, { own, privateOk });
    return refusal === null ? { addresses } : { reason: refusal };
  }

  async #resolve(policy: EgressPolicy, target: CanonicalHost): Promise<string[]> {
    const mapped = resolvedByPolicy(policy, target);
    if (mapped !== null) return [mapped];
    const signal = AbortSignal.timeout(this.options.connectTimeoutMs ?? 10_000);
    for (const type of ["A", "AAAA"] as const) {
      try {
        const found = await Deno.resolveDns(target.host, type, { signal });
        if (found.length > 0) return found;
      } catch {
        // No record of this type, or no answer: try the next.
      }
    }
    return [];
  }

  async #dial(addresses: string[]): Promise<Deno.Conn | null> {
    for (const address of addresses) {
      if (this.#closed) return null;
      try {
        const conn = await Deno.connect({
          hostname: address,
          port: this.options.port,
          signal: AbortSignal.timeout(this.options.connectTimeoutMs ?? 10_000),
        });
        this.#conns.add(conn);
        if (this.#closed) closeQuietly(conn);
        return conn;
      } catch {
        // Try the next address.
      }
    }
    return null;
  }

  async #blocked(reason: BlockedEvent["reason"]): Promise<void> {
    try {
      await this.options.onBlocked({ host: this.options.host, port: this.options.port, reason });
    } catch {
      // The caller's record failed; the refusal stands.
    }
  }
}
