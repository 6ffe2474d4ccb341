/**
 * The two guest services as Hono apps: the exec service (:1337, exec and files) and the host
 * service (:1340, ready, info, egress, and the desktop routes of
 * docs/guest-api.md#host-desktop-and-computer-use). Both share the
 * request id, the CORS allowlist, bearer auth, the JSON body reader and the one error handler.
 */
import { GroupWatcher } from "./group_watcher.ts";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import denoJson from "../../deno.json" with { type: "json" };
import { ExecRegistry } from "./exec_registry.ts";
import { execRouter } from "./exec_routes.ts";
import { errorResponses, ExecInfo } from "./exec_schemas.ts";
import { FilesHelper } from "./files_helper.ts";
import { filesRouter } from "./files_routes.ts";
import {
  type CapabilityState,
  commonRouter,
  type EgressState,
  hostRouter,
  PROTOCOL,
} from "./host_routes.ts";
import { Jail } from "./jail.ts";
import {
  bearerAuth,
  corsAllowlist,
  type GuestEnv,
  jsonBody,
  newRouter,
  onGuestError,
  onGuestNotFound,
  requestId,
} from "./middleware.ts";
import { type GuestSettings, SECRET_ENV } from "./settings.ts";

/** The guest's version, as /v1/info reports it. */
export const GUEST_VERSION: string = denoJson.version;

/** A service: its app, and how to stop what it started. */
export interface GuestService {
  app: OpenAPIHono<GuestEnv>;
  /** Stops every running exec and what finished ones left behind. */
  close(): Promise<void>;
}

/** Options of the exec service. `settings.workspace` must be an absolute, symlink-free path. */
export interface ExecAppOptions {
  settings: GuestSettings;
  /** Called once when POST /v1/shutdown is accepted. */
  onShutdown?: () => void;
  /** The environment children inherit (token variables are removed); default: the process's. */
  baseEnv?: Record<string, string>;
}

/** Options of the host service. */
export interface HostAppOptions {
  settings: GuestSettings;
  /** The listen addresses /v1/info reports (0.0.0.0 already rewritten to loopback). */
  endpoints: { exec: string; host: string };
  /** Whether the exec service is up; default: GET <endpoints.exec>/v1/health answers 200. */
  execReady?: () => Promise<boolean>;
  onShutdown?: () => void;
}

/** What the desktop adds to the host service: its routers, and how to tell the desktop is up. */
export interface HostExtras {
  mounts: { path: string; app: OpenAPIHono }[];
  desktopReady?: () => Promise<boolean>;
  capabilities?: () => Promise<Partial<Record<"desktop" | "chrome" | "cua", CapabilityState>>>;
  egress?: () => EgressState;
}

/** Builds the exec service: /v1/health, /v1/status, /v1/shutdown, /v1/exec, /v1/files. */
export function createExecApp(options: ExecAppOptions): GuestService {
  const settings = options.settings;
  const jail = new Jail(settings.workspace);
  // One watcher for the guest's life, where the session helper runs: every exec dies with it.
  const watcher = settings.sessionHelper ? GroupWatcher.start(settings.sessionHelper) : null;
  const registry = new ExecRegistry(settings, watcher);
  const started = performance.now();
  const app = baseApp(settings.token, settings, settings.maxFileBytes);
  app.route("/v1", commonRouter(options.onShutdown ?? (() => {})));
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/status",
      summary: "Exec slots, uptime and counters",
      responses: {
        200: {
          description: "the exec service",
          content: { "application/json": { schema: ExecInfo } },
        },
        ...errorResponses([401]),
      },
    }),
    (c) =>
      c.json({
        service: "box-exec" as const,
        protocol: PROTOCOL,
        version: GUEST_VERSION,
        workspace: settings.workspace,
        uptime_ms: Math.round(performance.now() - started),
        slots: { max: registry.slots, in_use: registry.running, running: registry.runningIds() },
        counters: { ...registry.counters },
      }, 200),
  );
  app.route(
    "/v1/exec",
    execRouter({ ...settings, jail, registry, baseEnv: childEnv(options.baseEnv) }),
  );
  const helper = settings.filesHelper ? new FilesHelper(settings.filesHelper, jail.root) : null;
  app.route("/v1/files", filesRouter({ ...settings, jail, helper }));
  return { app, close: () => registry.shutdown() };
}

/** Builds the host service: /v1/health, /v1/ready, /v1/info, /v1/egress, /v1/shutdown, mounts. */
export function createHostApp(options: HostAppOptions, extras?: HostExtras): GuestService {
  const settings = options.settings;
  const app = baseApp(settings.hostToken, settings, 1024 * 1024);
  app.route("/v1", commonRouter(options.onShutdown ?? (() => {})));
  app.route(
    "/v1",
    hostRouter({
      boxId: settings.boxId,
      version: GUEST_VERSION,
      workspace: settings.workspace,
      endpoints: options.endpoints,
      desktopRequired: settings.desktopRequired,
      filesHelper: Boolean(settings.filesHelper),
      execReady: options.execReady ?? (() => healthAnswers(options.endpoints.exec)),
      desktopReady: extras?.desktopReady,
      capabilities: extras?.capabilities,
      egress: extras?.egress,
    }),
  );
  for (const mount of extras?.mounts ?? []) app.route(mount.path, mount.app);
  return { app, close: () => Promise.resolve() };
}

function baseApp(
  token: string,
  settings: GuestSettings,
  fileBytes: number,
): OpenAPIHono<GuestEnv> {
  const app = newRouter();
  // A base64 body is 4/3 of its bytes; allow that plus room for the other fields.
  const bodyLimit = Math.ceil(fileBytes / 3) * 4 + 1024 * 1024;
  app.use("*", requestId());
  app.use("*", corsAllowlist(settings.corsOrigins));
  app.use("*", bearerAuth(token, ["/v1/health"]));
  app.use("*", jsonBody(bodyLimit));
  app.onError(onGuestError);
  app.notFound(onGuestNotFound);
  return app;
}

/** The environment children start from: the process's, without the token variables. */
function childEnv(base: Record<string, string> | undefined): Record<string, string> {
  const env = { ...(base ?? Deno.env.toObject()) };
  for (const name of SECRET_ENV) delete env[name];
  return env;
}

/** Whether GET <base>/v1/health answers 200 within a second. */
async function healthAnswers(base: string): Promise<boolean> {
  try {
    const response = await fetch(`${base}/v1/health`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
