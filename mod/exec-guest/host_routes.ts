/** The routes both services share (health, shutdown) and the host service's ready, info, egress. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { GuestError } from "./errors.ts";
import { errorResponses, Health, ShutdownAccepted } from "./exec_schemas.ts";
import { type GuestEnv, newRouter } from "./middleware.ts";

/** The protocol and versions the guest reports. */
export const PROTOCOL = "v1" as const;

const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

const Capability = z.object({ enabled: z.boolean(), ready: z.boolean() });

/** One capability as /v1/info reports it. */
export type CapabilityState = z.infer<typeof Capability>;

/** What /v1/egress reports (docs/egress-tunnel.md#status). */
export interface EgressState {
  enabled: boolean;
  ready: boolean;
  client_attached: boolean;
  protocol: "box-egress-v1";
  ws: string | null;
  proxy: string | null;
}

const Ready = z.object({
  status: z.literal("ready"),
  service: z.literal("box-host"),
  exec_ready: z.boolean(),
  desktop_ready: z.boolean(),
}).openapi("Ready");

const Info = z.object({
  box_id: z.string(),
  service: z.literal("box-host"),
  protocol: z.literal(PROTOCOL),
  version: z.object({ box_host: z.string(), box_exec: z.string(), protocol: z.literal(PROTOCOL) }),
  capabilities: z.object({
    exec: Capability,
    files: Capability,
    desktop: Capability,
    chrome: Capability,
    cua: Capability,
    egress_tunnel: Capability,
  }),
  endpoints: z.object({ exec: z.string(), host: z.string(), scope: z.literal("container-local") }),
  workspace: z.string(),
}).openapi("Info");

const Egress = z.object({
  enabled: z.boolean().describe("BOX_EGRESS_TUNNEL=1: the listener and the proxy run"),
  ready: z.boolean().describe("a laptop client is attached now; else Chromium's requests get 503"),
  client_attached: z.boolean().describe("a laptop client is attached now"),
  protocol: z.literal("box-egress-v1").describe("the wire protocol, docs/egress-tunnel.md"),
  ws: z.string().nullable().describe(
    "the WebSocket listener's address inside the guest (default 127.0.0.1:8790), not a URL to dial; null when disabled",
  ),
  proxy: z.string().nullable().describe(
    "the CONNECT proxy Chromium is started with (default 127.0.0.1:8791); null when disabled",
  ),
}).openapi("Egress");

/** GET /v1/health (open) and POST /v1/shutdown, on either service. */
export function commonRouter(onShutdown: () => void): OpenAPIHono<GuestEnv> {
  const router = newRouter();
  router.openapi(
    createRoute({
      method: "get",
      path: "/health",
      summary: "Liveness probe; the only route without a bearer token",
      responses: { 200: { description: "alive", ...json(Health) } },
    }),
    (c) => c.json({ status: "ok" as const }, 200),
  );
  router.openapi(
    createRoute({
      method: "post",
      path: "/shutdown",
      summary: "Schedule a graceful exit of the guest (both services)",
      responses: {
        200: { description: "scheduled", ...json(ShutdownAccepted) },
        ...errorResponses([401]),
      },
    }),
    (c) => {
      queueMicrotask(onShutdown);
      return c.json({ status: "shutting_down" as const }, 200);
    },
  );
  return router;
}

/** What the host routes need to know about the world. */
export interface HostDeps {
  boxId: string;
  version: string;
  workspace: string;
  endpoints: { exec: string; host: string };
  desktopRequired: boolean;
  /** Whether the files helper runs (without it the file routes answer 503). */
  filesHelper: boolean;
  /** Whether the exec service answers /v1/health now. */
  execReady: () => Promise<boolean>;
  desktopReady?: () => Promise<boolean>;
  /** The desktop, chrome and cua capabilities; all disabled when absent. */
  capabilities?: () => Promise<Partial<Record<"desktop" | "chrome" | "cua", CapabilityState>>>;
  /** The laptop egress tunnel's state; disabled when absent. */
  egress?: () => EgressState;
}

const OFF: CapabilityState = { enabled: false, ready: false };

/** GET /v1/ready, /v1/info and /v1/egress. */
export function hostRouter(deps: HostDeps): OpenAPIHono<GuestEnv> {
  const router = newRouter();
  router.openapi(
    createRoute({
      method: "get",
      path: "/ready",
      summary: "200 when the exec service answers (and, with BOX_DESKTOP_REQUIRED=1, the display)",
      responses: {
        200: { description: "ready", ...json(Ready) },
        ...errorResponses([401, 503]),
      },
    }),
    async (c) => {
      const [execReady, desktopReady] = await Promise.all([
        deps.execReady(),
        deps.desktopReady ? deps.desktopReady().catch(() => false) : Promise.resolve(false),
      ]);
      if (!execReady || (deps.desktopRequired && !desktopReady)) {
        const missing = !execReady
          ? "the exec service does not answer /v1/health"
          : "the X display is not up and BOX_DESKTOP_REQUIRED=1";
        throw new GuestError(
          "not_ready",
          503,
          `the guest is not ready: ${missing}; see runbook.md#guest-not-ready`,
        );
      }
      return c.json({
        status: "ready" as const,
        service: "box-host" as const,
        exec_ready: execReady,
        desktop_ready: desktopReady,
      }, 200);
    },
  );
  router.openapi(
    createRoute({
      method: "get",
      path: "/info",
      summary: "Capabilities, listen addresses, versions and the workspace",
      responses: { 200: { description: "the guest", ...json(Info) }, ...errorResponses([401]) },
    }),
    async (c) => {
      const execReady = await deps.execReady();
      const extra: Partial<Record<"desktop" | "chrome" | "cua", CapabilityState>> =
        deps.capabilities ? await deps.capabilities().catch(() => ({})) : {};
      const exec = { enabled: true, ready: execReady };
      return c.json({
        box_id: deps.boxId,
        service: "box-host" as const,
        protocol: PROTOCOL,
        version: { box_host: deps.version, box_exec: deps.version, protocol: PROTOCOL },
        capabilities: {
          exec,
          files: { enabled: true, ready: execReady && deps.filesHelper },
          desktop: extra.desktop ?? OFF,
          chrome: extra.chrome ?? OFF,
          cua: extra.cua ?? OFF,
          egress_tunnel: egressCapability(deps),
        },
        endpoints: { ...deps.endpoints, scope: "container-local" as const },
        workspace: deps.workspace,
      }, 200);
    },
  );
  router.openapi(
    createRoute({
      method: "get",
      path: "/egress",
      summary:
        "The laptop egress tunnel (BOX_EGRESS_TUNNEL=1): ready and client_attached while a client is attached",
      responses: {
        200: { description: "the tunnel's state", ...json(Egress) },
        ...errorResponses([401]),
      },
    }),
    (c) => c.json(deps.egress?.() ?? EGRESS_OFF, 200),
  );
  return router;
}

const EGRESS_OFF: EgressState = {
  enabled: false,
  ready: false,
  client_attached: false,
  protocol: "box-egress-v1",
  ws: null,
  proxy: null,
};

function egressCapability(deps: HostDeps): CapabilityState {
  const state = deps.egress?.() ?? EGRESS_OFF;
  return { enabled: state.enabled, ready: state.ready };
}
