/**
 * Test plumbing for the desktop: a free display and ports, the CUA apps mounted in a small Hono
 * app with the guest's error shape, and a local page that records every event it receives.
 */
import { Hono } from "hono";
import { createDesktop, type Desktop, type DesktopOptions } from "../../mod/cua/mod.ts";
import { GuestError } from "../../mod/exec-guest/errors.ts";

/** Whether Xvfb is installed; desktop tests skip with a message when it is not. */
export function hasXvfb(): boolean {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin").split(":")) {
    try {
      Deno.statSync(`${dir}/Xvfb`);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

/** A display number no X server holds. */
export function freeDisplay(): string {
  for (let n = 40 + Math.floor(Math.random() * 200); n < 1000; n++) {
    if (!exists(`/tmp/.X11-unix/X${n}`) && !exists(`/tmp/.X${n}-lock`)) return `:${n}`;
  }
  throw new Error("no free X display number between 40 and 1000");
}

/** A TCP port on loopback nobody listens on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Options for a test desktop in `workspace` on a free display and free ports. */
export function testOptions(
  workspace: string,
  overrides: Partial<DesktopOptions> = {},
): DesktopOptions {
  return {
    display: freeDisplay(),
    geometry: "1280x800x24",
    cua: true,
    workspace,
    chromeProfile: `${workspace}/.chrome-profile`,
    cdpPort: freePort(),
    startUrl: "about:blank",
    vncPassword: null,
    vncPort: freePort(),
    viewerPort: freePort(),
    viewerHost: "127.0.0.1",
    windowManager: true,
    ...overrides,
  };
}

/** The desktop's mounts in a Hono app whose onError answers GuestError.body(), else 500. */
export function mountApp(desktop: Desktop): Hono {
  const app = new Hono();
  for (const mount of desktop.mounts()) app.route(mount.path, mount.app);
  app.onError((error, c) => {
    if (error instanceof GuestError) {
      return c.json(error.body(), error.status as 400);
    }
    return c.json({ error: { code: "internal", message: String(error), status: 500 } }, 500);
  });
  return app;
}

/** Calls the app with a JSON body; returns the status and the parsed body. */
export async function call(
  app: Hono,
  path: string,
  body?: unknown,
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; body: any }> {
  const response = await app.request(path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

/** One event the page reported. */
export interface PageEvent {
  seq: number;
  type: string;
  x?: number;
  y?: number;
  cx?: number;
  cy?: number;
  button?: number;
  buttons?: number;
  key?: string;
  ctrl?: boolean;
  shift?: boolean;
  value?: string;
  dx?: number;
  dy?: number;
  path?: string;
}

const PAGE = `<!doctype html><html><head><title>cua test page</title></head>
<body style="margin:0;height:4000px;width:4000px">
<textarea id="t" style="position:absolute;left:40px;top:200px;width:400px;height:120px"></textarea>
<script>
let n = 0;
// Ordered across page loads: wall-clock milliseconds, then the order within this page.
const seq = () => performance.timeOrigin + performance.now() + (n++) * 1e-6;
const send = (e) => fetch("/event", { method: "POST", body: JSON.stringify({ seq: seq(), ...e }) });
const at = (e) => ({ x: e.screenX, y: e.screenY, cx: e.clientX, cy: e.clientY });
addEventListener("contextmenu", (e) => e.preventDefault());
addEventListener("mousemove", (e) => send({ type: "mousemove", buttons: e.buttons, ...at(e) }));
addEventListener("mousedown", (e) => send({ type: "mousedown", button: e.button, ...at(e) }));
addEventListener("mouseup", (e) => send({ type: "mouseup", button: e.button, ...at(e) }));
addEventListener("click", (e) => send({ type: "click", button: e.button, ...at(e) }));
addEventListener("dblclick", (e) => send({ type: "dblclick", button: e.button, ...at(e) }));
addEventListener("keydown", (e) => send({ type: "keydown", key: e.key, ctrl: e.ctrlKey, shift: e.shiftKey }));
addEventListener("wheel", (e) => send({ type: "wheel", dx: e.deltaX, dy: e.deltaY, ...at(e) }));
const t = document.getElementById("t");
t.addEventListener("input", (e) => send({ type: "input", value: e.target.value }));
t.addEventListener("focus", () => send({ type: "textarea-focus" }));
addEventListener("blur", () => send({ type: "page-blur" }));
addEventListener("load", () => send({ type: "load", path: location.pathname }));
</script></body></html>`;

/** A local page that records what it receives; `until` waits for a matching event. */
export class RecordingPage {
  readonly events: PageEvent[] = [];
  readonly requests: string[] = [];
  #waiters: (() => void)[] = [];
  #server: Deno.HttpServer<Deno.NetAddr>;

  constructor() {
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        const url = new URL(req.url);
        if (req.method === "POST" && url.pathname === "/event") {
          this.events.push(await req.json());
          this.events.sort((a, b) => a.seq - b.seq);
          for (const waiter of this.#waiters.splice(0)) waiter();
          return new Response("ok");
        }
        this.requests.push(url.pathname);
        if (url.pathname === "/favicon.ico") return new Response("", { status: 404 });
        return new Response(PAGE, { headers: { "content-type": "text/html" } });
      },
    );
  }

  /** The page's URL at `path`. */
  url(path = "/"): string {
    return `http://127.0.0.1:${this.#server.addr.port}${path}`;
  }

  /** Forgets the events recorded so far. */
  clear(): void {
    this.events.length = 0;
  }

  /** Waits until `match` holds for the events so far; fails after 10 s naming `what`. */
  async until<T>(
    what: string,
    match: (events: PageEvent[]) => T | undefined,
    timeoutMs = 10_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const found = match(this.events);
      if (found !== undefined && found !== false) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `the page never recorded ${what}; it recorded ${JSON.stringify(this.events.slice(-20))}`,
        );
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  }

  /** Stops the server. */
  async close(): Promise<void> {
    await this.#server.shutdown();
  }
}

/** Starts a test desktop with Chromium on the page; the caller stops it. */
export async function startDesktop(
  workspace: string,
  overrides: Partial<DesktopOptions>,
): Promise<{ desktop: Desktop; app: Hono; options: DesktopOptions }> {
  const options = testOptions(workspace, overrides);
  const desktop = createDesktop(options);
  try {
    await desktop.start();
  } catch (error) {
    await desktop.stop();
    throw error;
  }
  return { desktop, app: mountApp(desktop), options };
}

/**
 * Hovers near `point` until the page reports the pointer: a window may still be mapping when its
 * page has loaded. Returns the page's event, which carries screen and client coordinates.
 */
export async function hoverUntilSeen(
  app: Hono,
  page: RecordingPage,
  point: { x: number; y: number },
): Promise<PageEvent> {
  for (let y = point.y; y < point.y + 80; y++) {
    const moved = await call(app, "/v1/cua/move", { x: point.x, y });
    if (moved.status !== 200) throw new Error(`move answered ${moved.status}`);
    const seen = await page.until(
      `a hover at (${point.x}, ${y})`,
      (events) => events.find((e) => e.type === "mousemove" && e.x === point.x && e.y === y),
      250,
    ).catch(() => undefined);
    if (seen) return seen;
  }
  throw new Error(`the page never saw the pointer near (${point.x}, ${point.y})`);
}

/** The pointer position read by xdotool, independently of the code under test. */
export async function pointerByXdotool(display: string): Promise<{ x: number; y: number }> {
  const out = await new Deno.Command("xdotool", {
    args: ["getmouselocation", "--shell"],
    env: { DISPLAY: display },
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const x = Number(/X=(\d+)/.exec(text)?.[1]);
  const y = Number(/Y=(\d+)/.exec(text)?.[1]);
  return { x, y };
}
