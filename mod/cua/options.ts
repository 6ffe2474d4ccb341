/** The desktop's settings, read from the guest's environment (README.md#the-guest). */

/** Everything the desktop supervisor and the CUA routes need to know. */
export interface DesktopOptions {
  /** The X display, e.g. ":1" (BOX_DISPLAY). */
  display: string;
  /** WIDTHxHEIGHTxDEPTH (BOX_DISPLAY_GEOM). */
  geometry: string;
  /** false when BOX_CUA=0: every /v1/cua route answers 503 cua_disabled. */
  cua: boolean;
  /** The workspace root: artifact_dir and recordings resolve inside it. */
  workspace: string;
  /** Chromium's profile directory; null starts no Chromium. */
  chromeProfile: string | null;
  /** Chromium's DevTools port on 127.0.0.1. */
  cdpPort: number;
  /** The page Chromium opens first. */
  startUrl: string;
  /** The VNC password (BOX_VNC_PASSWORD); without one no VNC server is started. */
  vncPassword: string | null;
  /** x11vnc's port on 127.0.0.1. */
  vncPort: number;
  /** noVNC's port, and the address it listens on. */
  viewerPort: number;
  viewerHost: string;
  /** Start the window manager (openbox). */
  windowManager: boolean;
  /**
   * The laptop egress tunnel's proxy (`http://127.0.0.1:8791`) Chromium sends everything through,
   * loopback included; absent, Chromium goes out directly (docs/egress-tunnel.md).
   */
  proxyServer?: string;
}

/** BOX_DISPLAY and BOX_DISPLAY_GEOM when unset. */
export const DISPLAY_DEFAULTS = { display: ":1", geometry: "1280x800x24" } as const;

/** Chromium's DevTools port on 127.0.0.1. */
export const CDP_PORT = 9222;

/** The framebuffer's width, height and depth, parsed from BOX_DISPLAY_GEOM. */
export interface Geometry {
  width: number;
  height: number;
  depth: number;
}

/** Parses `1280x800x24`; throws a sentence naming the bad value. */
export function parseGeometry(geometry: string): Geometry {
  const match = /^(\d{2,5})x(\d{2,5})x(8|16|24)$/.exec(geometry);
  if (!match) {
    throw new Error(
      `BOX_DISPLAY_GEOM ${JSON.stringify(geometry)} is not WIDTHxHEIGHTxDEPTH such as 1280x800x24`,
    );
  }
  return { width: Number(match[1]), height: Number(match[2]), depth: Number(match[3]) };
}

/** The options from the environment, with the defaults above, inside the given workspace. */
export function desktopOptionsFromEnv(
  env: Record<string, string | undefined>,
  places: { workspace: string; home: string },
): DesktopOptions {
  const { display, geometry } = displayFromEnv(env);
  return {
    display,
    geometry,
    cua: env.BOX_CUA !== "0",
    workspace: places.workspace,
    chromeProfile: chromeProfileFrom(env, places.home),
    cdpPort: cdpPortFrom(env),
    startUrl: "about:blank",
    vncPassword: vncPasswordFrom(env),
    vncPort: 5900,
    viewerPort: 6080,
    viewerHost: "127.0.0.1",
    windowManager: true,
  };
}

/** BOX_DISPLAY and BOX_DISPLAY_GEOM, with their defaults; throws a sentence if either is bad. */
export function displayFromEnv(
  env: Record<string, string | undefined>,
): { display: string; geometry: string } {
  const display = env.BOX_DISPLAY ?? DISPLAY_DEFAULTS.display;
  if (!/^:\d{1,4}$/.test(display)) {
    throw new Error(`BOX_DISPLAY ${JSON.stringify(display)} is not a local display such as :1`);
  }
  const geometry = env.BOX_DISPLAY_GEOM ?? DISPLAY_DEFAULTS.geometry;
  parseGeometry(geometry);
  return { display, geometry };
}

/** BOX_CDP_PORT, else 9222: two guests on one machine each need their own. */
function cdpPortFrom(env: Record<string, string | undefined>): number {
  const value = env.BOX_CDP_PORT;
  if (value === undefined || value === "") return CDP_PORT;
  if (!/^[1-9][0-9]{0,4}$/.test(value) || Number(value) > 65535) {
    throw new Error(`BOX_CDP_PORT ${JSON.stringify(value)} is not a port from 1 to 65535`);
  }
  return Number(value);
}

/** BOX_CHROME_PROFILE, else `<home>/chrome-profile`: Chromium locks its profile to one browser. */
function chromeProfileFrom(env: Record<string, string | undefined>, home: string): string {
  const value = env.BOX_CHROME_PROFILE;
  if (value === undefined || value === "") return `${home}/chrome-profile`;
  if (!value.startsWith("/") || value.split("/").some((part) => part === "..")) {
    throw new Error(
      `BOX_CHROME_PROFILE ${JSON.stringify(value)} is not an absolute path without ..`,
    );
  }
  return value.length > 1 ? value.replace(/\/+$/, "") : value;
}

/** BOX_VNC_PASSWORD, else the first line of BOX_VNC_PASSWORD_FILE, else null. */
function vncPasswordFrom(env: Record<string, string | undefined>): string | null {
  if (env.BOX_VNC_PASSWORD) return env.BOX_VNC_PASSWORD;
  const file = env.BOX_VNC_PASSWORD_FILE;
  if (!file) return null;
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (error) {
    throw new Error(
      `BOX_VNC_PASSWORD_FILE ${JSON.stringify(file)} could not be read: ${
        (error as Error).message
      }`,
    );
  }
  const password = text.split("\n")[0].trim();
  return password === "" ? null : password;
}

/** The unix socket of a local display such as ":1". */
export function socketOf(display: string): string {
  return `/tmp/.X11-unix/X${display.replace(/^:/, "").replace(/\..*$/, "")}`;
}
