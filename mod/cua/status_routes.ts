/**
 * The desktop's status routes: /v1/desktop, /v1/chrome, /v1/windows
 * (docs/guest-api.md#host-desktop-and-computer-use).
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Cua } from "./cua_service.ts";
import type { DesktopOptions } from "./options.ts";
import type { Supervisor } from "./supervisor.ts";
import { validationHook } from "../exec-guest/mod.ts";

const STATUS_TIMEOUT_MS = 1000;

const DesktopStatus = z.object({
  enabled: z.boolean(),
  ready: z.boolean(),
  available: z.boolean(),
  display: z.string(),
  geometry: z.string(),
  vnc: z.string().nullable(),
  viewer: z.object({ port: z.number().int(), path: z.string(), url: z.string() }).nullable(),
}).openapi("DesktopStatus");

const ChromeStatus = z.object({
  enabled: z.boolean(),
  ready: z.boolean(),
  running: z.boolean(),
  profile: z.string().nullable(),
  cdp: z.string(),
  display: z.string(),
}).openapi("ChromeStatus");

const WindowList = z.object({
  windows: z.array(z.object({
    id: z.string(),
    desktop: z.number().int(),
    class: z.string(),
    title: z.string(),
  })),
}).openapi("WindowList");

/** What /v1/desktop answers. */
export type DesktopStatusBody = z.infer<typeof DesktopStatus>;
/** What /v1/chrome answers. */
export type ChromeStatusBody = z.infer<typeof ChromeStatus>;
/** One window of /v1/windows. */
export type WindowBody = z.infer<typeof WindowList>["windows"][number];

/** Where the status routes read the desktop: a running one, or none (`gurt guest` alone). */
export interface StatusSource {
  desktop(): Promise<DesktopStatusBody>;
  chrome(): Promise<ChromeStatusBody>;
  windows(): Promise<WindowBody[]>;
}

/** The status of a running desktop. */
export function liveStatus(
  context: { options: DesktopOptions; supervisor: Supervisor; cua: Cua },
): StatusSource {
  const { options, supervisor, cua } = context;
  return {
    desktop: async () => {
      const ready = await cua.displayAnswers();
      const viewerHost = options.viewerHost === "0.0.0.0" ? "127.0.0.1" : options.viewerHost;
      return {
        enabled: true,
        ready,
        available: ready && options.cua,
        display: options.display,
        geometry: options.geometry,
        vnc: supervisor.vncEnabled ? `127.0.0.1:${options.vncPort}` : null,
        viewer: supervisor.vncEnabled
          ? {
            port: options.viewerPort,
            path: "/vnc.html",
            url: `http://${viewerHost}:${options.viewerPort}/vnc.html`,
          }
          : null,
      };
    },
    chrome: async () => ({
      enabled: options.chromeProfile !== null,
      // A status read, not an observation: a loaded box gets a second to answer.
      ready: await supervisor.devtools.ready({ timeoutMs: STATUS_TIMEOUT_MS }),
      running: supervisor.chromeRunning,
      profile: options.chromeProfile,
      cdp: `127.0.0.1:${options.cdpPort}`,
      display: options.display,
    }),
    windows: () => cua.windows(),
  };
}

/** The status of a guest without a desktop: the same shapes, every one enabled: false. */
export function offStatus(
  desktop: { display: string; geometry: string; cdpPort: number },
): StatusSource {
  return {
    desktop: () =>
      Promise.resolve({
        enabled: false,
        ready: false,
        available: false,
        display: desktop.display,
        geometry: desktop.geometry,
        vnc: null,
        viewer: null,
      }),
    chrome: () =>
      Promise.resolve({
        enabled: false,
        ready: false,
        running: false,
        profile: null,
        cdp: `127.0.0.1:${desktop.cdpPort}`,
        display: desktop.display,
      }),
    windows: () => Promise.resolve([]),
  };
}

/** The /v1 status app; mount it at /v1. */
export function statusRoutes(source: StatusSource): OpenAPIHono {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  app.openapi(
    createRoute({
      method: "get",
      path: "/desktop",
      summary: "The X display, its geometry, VNC and the noVNC viewer; enabled: false without " +
        "--desktop",
      responses: { 200: { description: "desktop status", content: json(DesktopStatus) } },
    }),
    async (c) => c.json(await source.desktop(), 200),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/chrome",
      summary: "Chromium: running, and ready when GET /json/version answers on loopback; " +
        "enabled: false without --desktop",
      responses: { 200: { description: "Chromium status", content: json(ChromeStatus) } },
    }),
    async (c) => c.json(await source.chrome(), 200),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/windows",
      summary: "The client windows, like wmctrl -lx; empty if the desktop is down or not run",
      responses: { 200: { description: "windows", content: json(WindowList) } },
    }),
    async (c) => c.json({ windows: await source.windows() }, 200),
  );
  return app;
}

function json<S>(schema: S): { "application/json": { schema: S } } {
  return { "application/json": { schema } };
}
