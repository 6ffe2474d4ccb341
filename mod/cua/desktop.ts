/** The desktop as the guest sees it: start, stop, ready, and the routes to mount. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { cuaDisabled, noDesktop } from "./cua_errors.ts";
import { Cua } from "./cua_service.ts";
import { cuaRoutes } from "./cua_routes.ts";
import { DevTools } from "./devtools.ts";
import {
  CDP_PORT,
  type DesktopOptions,
  DISPLAY_DEFAULTS,
  displayFromEnv,
  parseGeometry,
} from "./options.ts";
import { liveStatus, offStatus, statusRoutes } from "./status_routes.ts";
import { Supervisor } from "./supervisor.ts";

/** The X desktop with computer use. */
export interface Desktop {
  /** Starts Xvfb, openbox, Chromium, x11vnc and noVNC; resolves when each answers. */
  start(): Promise<void>;
  /** Closes the X connections and stops every process it started. */
  stop(): Promise<void>;
  /** Whether the X display answers a round trip within 400 ms. */
  ready(): Promise<boolean>;
  /** The desktop, chrome and cua capabilities as the guest's /v1/info reports them. */
  capabilities(): Promise<
    Record<"desktop" | "chrome" | "cua", { enabled: boolean; ready: boolean }>
  >;
  /** Chromium's process group while it runs (the egress proxy admits only it); else null. */
  chromeGroup(): number | null;
  /** The apps to mount on the guest's host service: /v1/cua and /v1 (desktop, chrome, windows). */
  mounts(): { path: string; app: OpenAPIHono }[];
}

/** Builds the desktop from its options; nothing starts until start(). */
export function createDesktop(options: DesktopOptions): Desktop {
  const geometry = parseGeometry(options.geometry);
  const supervisor = new Supervisor(options);
  const cua = new Cua(
    options.display,
    { width: geometry.width, height: geometry.height },
    supervisor,
  );
  const apps = [
    {
      path: "/v1/cua",
      app: cuaRoutes({
        refusal: options.cua ? null : cuaDisabled,
        cua,
        devtools: supervisor.devtools,
        workspace: options.workspace,
      }),
    },
    { path: "/v1", app: statusRoutes(liveStatus({ options, supervisor, cua })) },
  ];
  return {
    start: async () => {
      try {
        await supervisor.start();
      } catch (error) {
        // Leave nothing half-started behind.
        await supervisor.stop();
        throw error;
      }
    },
    stop: async () => {
      cua.close();
      await supervisor.stop();
    },
    ready: () => cua.displayAnswers(),
    capabilities: async () => {
      const [display, chrome] = await Promise.all([
        cua.displayAnswers(),
        options.chromeProfile === null ? false : supervisor.devtools.ready({ timeoutMs: 1000 }),
      ]);
      return {
        desktop: { enabled: true, ready: display },
        chrome: { enabled: options.chromeProfile !== null, ready: chrome },
        cua: { enabled: options.cua, ready: options.cua && display },
      };
    },
    chromeGroup: () => supervisor.chromePid,
    mounts: () => apps,
  };
}

/**
 * The desktop's routes for a guest run without --desktop: the same routes and shapes, so that a
 * client reads the state instead of a 404: /v1/desktop and /v1/chrome say enabled: false (with the
 * display, geometry and DevTools port --desktop would use), /v1/windows is empty, and every
 * /v1/cua route answers 503 cua_disabled saying how to turn it on. Nothing is started.
 */
export function desktopOff(
  env: Record<string, string | undefined>,
  workspace: string,
): { path: string; app: OpenAPIHono }[] {
  let shown: { display: string; geometry: string } = DISPLAY_DEFAULTS;
  try {
    shown = displayFromEnv(env);
  } catch {
    // A bad BOX_DISPLAY matters only to --desktop, which refuses to start with it.
  }
  const desktop = { ...shown, cdpPort: CDP_PORT, workspace };
  const geometry = parseGeometry(desktop.geometry);
  return [
    {
      path: "/v1/cua",
      app: cuaRoutes({
        refusal: noDesktop,
        cua: new Cua(desktop.display, { width: geometry.width, height: geometry.height }, null),
        devtools: new DevTools(desktop.cdpPort),
        workspace: desktop.workspace,
      }),
    },
    { path: "/v1", app: statusRoutes(offStatus(desktop)) },
  ];
}
