/**
 * A task's egress proxy: its one way out of its sandbox. HTTP CONNECT, absolute-form HTTP and
 * SOCKS5 on one Unix socket; only the task's host list; names resolved by the proxy; no private,
 * metadata or own addresses; a tunnel's TLS held to the host it names. And a TCP forward: one
 * fixed host:port behind a Unix socket, admitted by the same address rules (an app's `ports`).
 */
export type { BlockedEvent, EgressOptions, EgressServer, TunnelTaker } from "./egress_options.ts";
export { serveEgress } from "./egress_server.ts";
export { type ForwardOptions, serveForward } from "./tcp_forward.ts";
export { type BlockReason, type EgressPolicy, METADATA_ADDRESSES } from "./host_policy.ts";
export { refusalText } from "./refusal.ts";
export {
  type FrontHandler,
  type FrontLeaf,
  type FrontTunnel,
  openTlsFront,
  type TlsFront,
  type TlsFrontOptions,
} from "./tls_front.ts";
export { type LoopbackRelay, openLoopbackRelay } from "./loopback_relay.ts";
export { helloFirst } from "./client_hello.ts";
