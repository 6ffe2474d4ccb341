/**
 * A task's egress proxy on its own Unix socket (bridged into the task's network namespace on
 * loopback). One socket speaks HTTP CONNECT, absolute-form HTTP and SOCKS5, told apart by the first
 * byte. For each connection it reads the task's policy afresh, lets through only a listed host (or
 * one the owner approves when unknown is "ask"), resolves the name itself, refuses private,
 * metadata and the box's own addresses, dials the very address it checked, and holds a tunnel's
 * TLS to the host it was opened to; a tunnel that is not TLS carries one plain HTTP request, held
 * to the tunnel's host like an absolute-form one. Every refusal is told to the caller
 * (net.blocked) before the client is answered.
 */
import { type CanonicalHost, canonicalHost, hostText } from "../config/mod.ts";
import { acceptConnections } from "../net/mod.ts";
import {
  answerAndClose,
  closeQuietly,
  Deadline,
  Inbound,
  latin1,
  latin1Bytes,
  pump,
  sendBody,
  writeAll,
} from "./byte_streams.ts";
import { judgeFirstBytes, MAX_HELLO_BYTES } from "./client_hello.ts";
import {
  addressRefusal,
  type BlockReason,
  type EgressPolicy,
  isListed,
  privateAllowed,
  resolvedByPolicy,
} from "./host_policy.ts";
import { plainAnswer, refusalAnswer } from "./refusal.ts";
import { BodyEnd } from "./request_body.ts";
import {
  headEnd,
  hostHeaderMatches,
  hostLine,
  mayBeRequest,
  parseRequestHead,
  parseTunnelRequest,
  recordedHost,
  shown,
} from "./request_head.ts";
import { readGreeting, readRequest, SOCKS_REPLY, SOCKS_VERSION, socksReply } from "./socks5.ts";
import type { BlockedEvent, EgressOptions, EgressServer, TunnelTaker } from "./egress_options.ts";

const CONNECTED = new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n");

/** Starts a task's egress proxy on `options.socketPath`. */
export async function serveEgress(options: EgressOptions): Promise<EgressServer> {
  try {
    if ((await Deno.lstat(options.socketPath)).isSocket) await Deno.remove(options.socketPath);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const listener = Deno.listen({ transport: "unix", path: options.socketPath });
  await Deno.chmod(options.socketPath, 0o600);
  const proxy = new EgressProxy(listener, options);
  proxy.accept();
  return proxy;
}

/** Admission: the addresses to dial, or why not. */
type Admission = { addresses: string[] } | { reason: BlockReason };

class EgressProxy implements EgressServer {
  readonly #listener: Deno.Listener<Deno.UnixConn, Deno.UnixAddr>;
  readonly #options: EgressOptions;
  readonly #clients = new Set<Deno.Conn>();
  readonly #origins = new Set<Deno.Conn>();
  readonly #handlers = new Set<Promise<void>>();
  #closed = false;
  #accepting: Promise<void> = Promise.resolve();

  constructor(listener: Deno.Listener<Deno.UnixConn, Deno.UnixAddr>, options: EgressOptions) {
    this.#listener = listener;
    this.#options = options;
  }

  get socketPath(): string {
    return this.#options.socketPath;
  }

  get connections(): number {
    return this.#clients.size;
  }

  accept(): void {
    // mod/net's loop: running out of descriptors pauses accepting, where it used to end it.
    this.#accepting = acceptConnections(this.#listener, {
      name: `the egress proxy at ${this.#options.socketPath}`,
      stopped: () => this.#closed,
      take: (conn) => {
        const handler = this.#handle(conn);
        this.#handlers.add(handler);
        handler.finally(() => this.#handlers.delete(handler));
      },
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#listener.close();
    } catch {
      // Already closed.
    }
    for (const conn of [...this.#clients, ...this.#origins]) closeQuietly(conn);
    await this.#accepting;
    await Promise.allSettled([...this.#handlers]);
    await Deno.remove(this.#options.socketPath).catch(() => {});
  }

  async #handle(conn: Deno.Conn): Promise<void> {
    const max = this.#options.maxConnections ?? 256;
    if (this.#clients.size >= max) {
      await answerAndClose(
        conn,
        plainAnswer("503 Service Unavailable", {
          text:
            `gurt egress: this task already has ${max} connections open through its proxy, the most it may; close some and try again. see runbook.md#egress-busy`,
        }),
      );
      return;
    }
    this.#clients.add(conn);
    try {
      await this.#serve(new Inbound(conn));
    } catch {
      // A connection that fails mid-way just ends.
    } finally {
      this.#clients.delete(conn);
      closeQuietly(conn);
    }
  }

  async #serve(inbound: Inbound): Promise<void> {
    const deadline = new Deadline(inbound.conn, this.#options.headTimeoutMs ?? 10_000);
    try {
      if (!await inbound.fill(1)) return;
      if (inbound.buffered[0] === SOCKS_VERSION) await this.#socks(inbound, deadline);
      else await this.#http(inbound, deadline);
    } finally {
      deadline.clear();
    }
  }

  async #http(inbound: Inbound, deadline: Deadline): Promise<void> {
    const cap = this.#options.maxHeadBytes ?? 16 * 1024;
    let end = headEnd(inbound.buffered);
    while (end === -1) {
      if (inbound.buffered.length >= cap) return await this.#refuseHttp(inbound, "bad_request");
      const scanned = inbound.buffered.length;
      if (!await inbound.readMore(cap)) return;
      end = headEnd(inbound.buffered, scanned);
    }
    const headText = latin1(inbound.take(end));
    const head = parseRequestHead(headText);
    if ("problem" in head) return await this.#refuseHttp(inbound, "bad_request");
    const target = canonicalHost(head.host);
    if ("problem" in target) {
      const reason = target.address ? "ip_literal" : "bad_request";
      return await this.#refuseHttp(inbound, reason, shown(head.host), head.port);
    }
    const named = hostText(target);
    if (head.kind === "absolute" && head.hostHeader !== null) {
      if (!hostHeaderMatches(head.hostHeader, { host: target, port: head.port })) {
        return await this.#refuseHttp(inbound, "host_mismatch", named, head.port);
      }
    }
    if (head.kind === "absolute" && this.#carriesCredential(headText)) {
      return await this.#refuseHttp(inbound, "credential_plain_http", named, head.port);
    }
    deadline.clear();
    const taker = head.kind === "connect" ? this.#taker(target, head.port) : null;
    if (taker !== null) {
      await writeAll(inbound.conn, CONNECTED);
      return await taker(inbound.conn, inbound.take());
    }
    const admission = await this.#admit(target, head.port);
    if ("reason" in admission) {
      return await this.#refuseHttp(inbound, admission.reason, named, head.port);
    }
    const origin = await this.#dial(admission.addresses, head.port);
    if (origin === null) {
      return await answerAndClose(
        inbound.conn,
        plainAnswer("502 Bad Gateway", {
          text:
            `gurt egress: ${named}:${head.port} is allowed, but it did not accept a connection.`,
        }),
      );
    }
    try {
      if (head.kind === "connect") {
        await writeAll(inbound.conn, CONNECTED);
        await this.#tunnel(inbound, origin, target, head.port);
        return;
      }
      await writeAll(origin, latin1Bytes(head.forward(hostLine(target, head.port))));
      // The origin closes after its answer (Connection: close); then the exchange is over.
      const back = pump(origin, inbound.conn);
      void sendBody(inbound, origin, new BodyEnd(head.body));
      await back;
    } finally {
      this.#origins.delete(origin);
      closeQuietly(origin);
    }
  }

  async #socks(inbound: Inbound, deadline: Deadline): Promise<void> {
    const cap = this.#options.maxHeadBytes ?? 16 * 1024;
    const conn = inbound.conn;
    let greeting = readGreeting(inbound.buffered);
    while ("need" in greeting) {
      if (!await inbound.fill(greeting.need, cap)) return;
      greeting = readGreeting(inbound.buffered);
    }
    if ("problem" in greeting || !greeting.methods.includes(0)) {
      await this.#blocked({ host: "", port: 0, reason: "bad_request" });
      return await answerAndClose(conn, new Uint8Array([SOCKS_VERSION, 0xff]));
    }
    inbound.take(greeting.length);
    await writeAll(conn, new Uint8Array([SOCKS_VERSION, 0]));
    let request = readRequest(inbound.buffered);
    while ("need" in request) {
      if (!await inbound.fill(request.need, cap)) return;
      request = readRequest(inbound.buffered);
    }
    if ("problem" in request || request.command !== 1) {
      const code = "problem" in request
        ? SOCKS_REPLY.addressTypeNotSupported
        : SOCKS_REPLY.commandNotSupported;
      const port = "problem" in request ? 0 : request.port;
      await this.#blocked({ host: "", port, reason: "bad_request" });
      return await answerAndClose(conn, socksReply(code));
    }
    inbound.take(request.length);
    const target = canonicalHost(request.host);
    const refuse = async (reason: BlockReason, host: string) => {
      await this.#blocked({ host, port: request.port, reason });
      await answerAndClose(conn, socksReply(SOCKS_REPLY.notAllowed));
    };
    if ("problem" in target) {
      return await refuse(target.address ? "ip_literal" : "bad_request", shown(request.host));
    }
    deadline.clear();
    const taker = this.#taker(target, request.port);
    if (taker !== null) {
      await writeAll(conn, socksReply(SOCKS_REPLY.succeeded));
      return await taker(conn, inbound.take());
    }
    const admission = await this.#admit(target, request.port);
    if ("reason" in admission) return await refuse(admission.reason, hostText(target));
    const origin = await this.#dial(admission.addresses, request.port);
    if (origin === null) return await answerAndClose(conn, socksReply(SOCKS_REPLY.refused));
    try {
      await writeAll(conn, socksReply(SOCKS_REPLY.succeeded));
      await this.#tunnel(inbound, origin, target, request.port);
    } finally {
      this.#origins.delete(origin);
      closeQuietly(origin);
    }
  }

  /**
   * Pipes a tunnel both ways once its first bytes pass (a ClientHello naming the target), or
   * forwards the one plain HTTP request it carries (not TLS, off port 443 only). The origin's
   * bytes flow from the start; the client's are held until judged. Ends when the origin's side
   * ends.
   */
  async #tunnel(
    inbound: Inbound,
    origin: Deno.Conn,
    target: CanonicalHost,
    port: number,
  ): Promise<void> {
    const client = inbound.conn;
    const back = pump(origin, client);
    let verdict = judgeFirstBytes(inbound.buffered, { host: target, port });
    let deadline: Deadline | null = null;
    while ("need" in verdict) {
      // Waiting for a first byte has no limit (the server may speak first); a started
      // ClientHello must be finished within the head timeout.
      if (deadline === null && inbound.buffered.length > 0) {
        deadline = new Deadline(client, this.#options.headTimeoutMs ?? 10_000);
      }
      if (!await inbound.fill(verdict.need, MAX_HELLO_BYTES)) {
        deadline?.clear();
        if (inbound.buffered.length === 0) await origin.closeWrite().catch(() => {});
        else closeQuietly(origin);
        await back;
        return;
      }
      verdict = judgeFirstBytes(inbound.buffered, { host: target, port });
    }
    deadline?.clear();
    if ("reason" in verdict) {
      await this.#blocked({ host: hostText(target), port, reason: verdict.reason });
      closeQuietly(origin);
      closeQuietly(client);
      await back;
      return;
    }
    if ("plain" in verdict) {
      return await this.#plainRequest(inbound, origin, { target, port, back });
    }
    await writeAll(origin, inbound.take());
    void pump(client, origin);
    await back;
  }

  /**
   * A tunnel that does not start with TLS: its bytes must be one plain HTTP request in origin form
   * whose Host header (if it has one) names the tunnel's host and port, which is forwarded with
   * `Connection: close` like an absolute-form request, its body framed and nothing after it sent.
   * A tunnel's later requests could name any host, so there are none. Other protocols are closed
   * as not_tls; a request for another host is answered 403 inside the tunnel.
   */
  async #plainRequest(
    inbound: Inbound,
    origin: Deno.Conn,
    tunnel: { target: CanonicalHost; port: number; back: Promise<boolean> },
  ): Promise<void> {
    const { target, port, back } = tunnel;
    const client = inbound.conn;
    const named = hostText(target);
    const refuse = async (reason: BlockReason) => {
      await this.#blocked({ host: named, port, reason });
      closeQuietly(origin);
      await back;
      if (reason === "not_tls") closeQuietly(client);
      else await answerAndClose(client, refusalAnswer(reason, `${named}:${port}`));
    };
    const cap = this.#options.maxHeadBytes ?? 16 * 1024;
    const deadline = new Deadline(client, this.#options.headTimeoutMs ?? 10_000);
    let end = headEnd(inbound.buffered);
    let judged = 0;
    try {
      while (end === -1) {
        // Each read is judged and searched from where the last left off, not from the start.
        const scanned = inbound.buffered.length;
        if (!mayBeRequest(inbound.buffered, judged)) return await refuse("not_tls");
        judged = scanned;
        if (scanned >= cap) return await refuse("bad_request");
        if (!await inbound.readMore(cap)) {
          closeQuietly(origin);
          await back;
          return;
        }
        end = headEnd(inbound.buffered, scanned);
      }
    } finally {
      deadline.clear();
    }
    if (!mayBeRequest(inbound.buffered, judged)) return await refuse("not_tls");
    const headText = latin1(inbound.take(end));
    const head = parseTunnelRequest(headText);
    if ("problem" in head) return await refuse("bad_request");
    if (this.#carriesCredential(headText)) return await refuse("credential_plain_http");
    if (head.hostHeader !== null && !hostHeaderMatches(head.hostHeader, { host: target, port })) {
      return await refuse("host_mismatch");
    }
    await writeAll(origin, latin1Bytes(head.forward(hostLine(target, port))));
    void sendBody(inbound, origin, new BodyEnd(head.body));
    await back;
  }

  /** Whether a plain request head carries a credential placeholder of the task's. */
  #carriesCredential(head: string): boolean {
    try {
      return this.#options.carriesCredential?.(head) === true;
    } catch {
      return true;
    }
  }

  /** The taker of a tunnel the box answers itself, or null. */
  #taker(target: CanonicalHost, port: number): TunnelTaker | null {
    if (target.kind !== "name" || this.#options.intercept === undefined) return null;
    return this.#options.intercept(target.host, port);
  }

  /** Whether `target` may be reached on `port`, and at which addresses. */
  async #admit(target: CanonicalHost, port: number): Promise<Admission> {
    let policy: EgressPolicy;
    try {
      policy = this.#options.policy();
    } catch {
      return { reason: "not_listed" };
    }
    if (!isListed(policy, { host: target, port })) {
      if (target.kind === "ip") return { reason: "ip_literal" };
      if (policy.unknown !== "ask" || this.#options.ask === undefined) {
        return { reason: "not_listed" };
      }
      const approved = await this.#options.ask(target.host, port).catch(() => false);
      if (!approved || this.#closed) return { reason: "not_listed" };
    }
    const addresses = target.kind === "ip" ? [target.host] : await this.#resolve(policy, target);
    if (addresses.length === 0) return { reason: "resolve_failed" };
    let own: string[] | null;
    try {
      own = this.#options.ownAddresses();
    } catch {
      own = null;
    }
    const refusal = addressRefusal(addresses, { own, privateOk: privateAllowed(policy, target) });
    return refusal === null ? { addresses } : { reason: refusal };
  }

  /** The policy's address for a name, else DNS's A records, else its AAAA records. */
  async #resolve(policy: EgressPolicy, target: CanonicalHost): Promise<string[]> {
    const mapped = resolvedByPolicy(policy, target);
    if (mapped !== null) return [mapped];
    const signal = AbortSignal.timeout(this.#options.connectTimeoutMs ?? 10_000);
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

  /** A connection to the first of `addresses` (each already checked) that accepts one. */
  async #dial(addresses: string[], port: number): Promise<Deno.Conn | null> {
    for (const address of addresses) {
      if (this.#closed) return null;
      try {
        const conn = await Deno.connect({
          hostname: address,
          port,
          signal: AbortSignal.timeout(this.#options.connectTimeoutMs ?? 10_000),
        });
        this.#origins.add(conn);
        if (this.#closed) closeQuietly(conn);
        return conn;
      } catch {
        // Try the next address.
      }
    }
    return null;
  }

  async #refuseHttp(
    inbound: Inbound,
    reason: BlockReason,
    host = "",
    port = 0,
  ): Promise<void> {
    await this.#blocked({ host, port, reason });
    const target = host === "" ? "the target" : `${host}:${port}`;
    await answerAndClose(inbound.conn, refusalAnswer(reason, target));
  }

  async #blocked(event: BlockedEvent): Promise<void> {
    try {
      await this.#options.onBlocked({ ...event, host: recordedHost(event.host) });
    } catch {
      // The caller's record failed; the refusal stands.
    }
  }
}
