/**
 * The tunnel as `gurt guest` runs it (BOX_EGRESS_TUNNEL=1): its settings from the environment,
 * the WebSocket listener and the CONNECT proxy on loopback, and the status /v1/egress reports.
 */
import { serveProxy } from "./connect_proxy.ts";
import { DEFAULT_LIMITS, PROTOCOL } from "./frames.ts";
import { EgressHub } from "./hub.ts";
import { PeerCheck } from "./peer_check.ts";

/** BOX_EGRESS_WS and BOX_EGRESS_PROXY when unset. */
export const EGRESS_DEFAULTS = { ws: "127.0.0.1:8790", proxy: "127.0.0.1:8791" } as const;

/** The tunnel's settings; null when BOX_EGRESS_TUNNEL is not 1. */
export interface EgressSettings {
  token: string;
  ws: { hostname: string; port: number };
  proxy: { hostname: string; port: number };
}

/** The status /v1/egress reports (the guest specification's shape). */
export interface EgressStatus {
  enabled: boolean;
  ready: boolean;
  client_attached: boolean;
  protocol: typeof PROTOCOL;
  ws: string | null;
  proxy: string | null;
}

/** Reads BOX_EGRESS_*; throws a sentence naming the bad variable. */
export function egressSettingsFromEnv(
  env: Record<string, string | undefined>,
  hostToken: string,
): EgressSettings | null {
  if (env.BOX_EGRESS_TUNNEL !== "1") return null;
  return {
    token: env.BOX_EGRESS_TOKEN || hostToken,
    ws: loopbackAddress("BOX_EGRESS_WS", env.BOX_EGRESS_WS ?? EGRESS_DEFAULTS.ws),
    proxy: loopbackAddress("BOX_EGRESS_PROXY", env.BOX_EGRESS_PROXY ?? EGRESS_DEFAULTS.proxy),
  };
}

function loopbackAddress(name: string, value: string): { hostname: string; port: number } {
  const match = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}):(\d{1,5})$/.exec(value);
  if (match === null || Number(match[2]) > 65535) {
    throw new Error(
      `${name} ${JSON.stringify(value)} is not a loopback IPv4 host:port such as 127.0.0.1:8790; ` +
        "see runbook.md#guest-settings-invalid",
    );
  }
  return { hostname: match[1], port: Number(match[2]) };
}

/** The running tunnel. */
export interface EgressTunnel {
  status(): EgressStatus;
  /** The proxy's address, `http://host:port`, for Chromium's --proxy-server. */
  proxyUrl: string;
  hub: EgressHub;
  close(): Promise<void>;
}

/** The status of a tunnel that is off. */
export const EGRESS_OFF: EgressStatus = {
  enabled: false,
  ready: false,
  client_attached: false,
  protocol: PROTOCOL,
  ws: null,
  proxy: null,
};

/**
 * Starts the listener and the proxy. `chromeGroup` is Chromium's process group (its pid), or null
 * while it is not running: only its processes may use the proxy.
 */
export function startEgressTunnel(
  settings: EgressSettings,
  chromeGroup: () => number | null,
): EgressTunnel {
  const hub = new EgressHub(settings.token, DEFAULT_LIMITS);
  const ws = Deno.listen({ ...settings.ws, transport: "tcp" });
  const attaching = hub.serve(ws);
  const listener = Deno.listen({ ...settings.proxy, transport: "tcp" });
  const check = new PeerCheck(chromeGroup);
  const serving = serveProxy(listener, hub, (peer, local) => check.refusal(peer, local));
  const wsAddr = `${(ws.addr as Deno.NetAddr).hostname}:${(ws.addr as Deno.NetAddr).port}`;
  const proxyAddr = `${(listener.addr as Deno.NetAddr).hostname}:${
    (listener.addr as Deno.NetAddr).port
  }`;
  return {
    hub,
    proxyUrl: `http://${proxyAddr}`,
    status: () => ({
      enabled: true,
      ready: hub.attached,
      client_attached: hub.attached,
      protocol: PROTOCOL,
      ws: wsAddr,
      proxy: proxyAddr,
    }),
    close: async () => {
      hub.close();
      listener.close();
      ws.close();
      check.close();
      await Promise.all([serving, attaching]);
    },
  };
}
