/**
 * What a task's egress proxy is given and gives back: its options (where it listens, the task's
 * policy, where refusals go, the tunnels the box answers itself), a refusal, and the running proxy.
 */
import type { BlockReason, EgressPolicy } from "./host_policy.ts";

/** A connection the proxy refused: the host as the client named it, the port, and why. */
export interface BlockedEvent {
  /** Printable ASCII, at most 255 characters; never empty: `(none)` when the client named none. */
  host: string;
  port: number;
  reason: BlockReason;
}

/** What serveEgress needs: where to listen, the task's policy, and where refusals go. */
export interface EgressOptions {
  /** The Unix socket to listen on (tasks/<id>/egress.sock); a stale socket there is replaced. */
  socketPath: string;
  /** The task's policy, read for every connection. */
  policy(): EgressPolicy;
  /** The box's own addresses, read for every connection; a throw refuses every non-private host. */
  ownAddresses(): string[];
  /** Told of every refusal before the client is answered (the caller writes net.blocked). */
  onBlocked(event: BlockedEvent): Promise<void>;
  /** For unknown = "ask": asks the owner about a host on no list; true lets this connection on. */
  ask?(host: string, port: number): Promise<boolean>;
  /**
   * The tunnels the box answers itself (the model services' HTTPS): for a CONNECT or SOCKS5
   * request naming `host` (canonical) and `port`, a taker of the tunnel, or null for the policy's
   * way. A taker is given the client's connection once the tunnel is open, with the bytes the
   * client already sent after its request; the proxy closes the connection when it returns (a
   * taker that wants a ClientHello naming its host first wraps itself in helloFirst). Such a
   * tunnel is opened for any task whatever its host list, and nothing is resolved or dialled.
   */
  intercept?(host: string, port: number): TunnelTaker | null;
  /**
   * Whether a plain HTTP request head (an absolute-form request's, or one in a tunnel) carries one
   * of the task's credential placeholders: such a request is refused (credential_plain_http), for
   * a credential goes only on HTTPS the box answers. Absent: none does.
   */
  carriesCredential?(head: string): boolean;
  /** The largest request head, SOCKS request included (16 KiB). */
  maxHeadBytes?: number;
  /** How long a client may take to send its request head, or a tunnel's ClientHello (10 s). */
  headTimeoutMs?: number;
  /** How many client connections may be open at once (256). */
  maxConnections?: number;
  /** How long resolving a name and dialling its address may each take (10 s). */
  connectTimeoutMs?: number;
}

/** Takes over an intercepted tunnel: `client` after its request, `first` what it sent since. */
export type TunnelTaker = (client: Deno.Conn, first: Uint8Array) => Promise<void>;

/** A running proxy. */
export interface EgressServer {
  readonly socketPath: string;
  /** Client connections open now. */
  readonly connections: number;
  /** Closes the listener and every open connection and tunnel. */
  close(): Promise<void>;
}
