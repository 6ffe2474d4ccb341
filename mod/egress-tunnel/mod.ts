/**
 * The laptop egress tunnel, `box-egress-v1` (docs/egress-tunnel.md): the guest's WebSocket
 * listener and CONNECT proxy, and the laptop's client.
 */
export {
  EGRESS_DEFAULTS,
  EGRESS_OFF,
  type EgressSettings,
  egressSettingsFromEnv,
  type EgressStatus,
  type EgressTunnel,
  startEgressTunnel,
} from "./guest_end.ts";
export { EgressHub } from "./hub.ts";
export { serveProxy } from "./connect_proxy.ts";
export { type ClientOptions, decide, isPrivateAddress, runClient } from "./client.ts";
export { DEFAULT_LIMITS, PROTOCOL } from "./frames.ts";
