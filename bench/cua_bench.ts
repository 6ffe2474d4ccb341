/**
 * Computer use against the tools it replaces, on one desktop in the same run: a click through
 * the held XTEST connection vs `xdotool mousemove … click 1`, and a PNG screenshot of a busy page
 * vs ImageMagick's `import -window root png:-`. Medians of ROUNDS runs each.
 */
import { Hono } from "hono";
import { createDesktop } from "../mod/cua/mod.ts";
import { printTable } from "./table.ts";

const ROUNDS = 25;

const BUSY_PAGE = `<!doctype html><html><body style="margin:0">${
  Array.from({ length: 600 }, (_, i) =>
    `<span style="display:inline-block;width:52px;height:31px;font:11px serif;background:hsl(${
      (i * 37) % 360
    },70%,${30 + (i * 13) % 50}%);color:#fff">${i} ${(i * 7919).toString(36)}</span>`).join("")
}</body></html>`;

const stops: (() => Promise<void>)[] = [];
const workspace = await Deno.makeTempDir({ prefix: "gurt-cua-bench-" });
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  () => new Response(BUSY_PAGE, { headers: { "content-type": "text/html" } }),
);
const display = freeDisplay();
const desktop = createDesktop({
  display,
  geometry: "1280x800x24",
  cua: true,
  workspace,
  chromeProfile: `${workspace}/.chrome-profile`,
  cdpPort: freePort(),
  startUrl: `http://127.0.0.1:${server.addr.port}/`,
  vncPassword: null,
  vncPort: freePort(),
  viewerPort: freePort(),
  viewerHost: "127.0.0.1",
  windowManager: true,
});
try {
  await desktop.start();
  // The routes served over real HTTP on loopback, as a client of the guest would call them.
  const host = new Hono();
  for (const mount of desktop.mounts()) host.route(mount.path, mount.app);
  const guest = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, host.fetch);
  const base = `http://127.0.0.1:${guest.addr.port}/v1/cua`;
  const get = (path: string) => fetch(`${base}${path}`);
  const post = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  stops.push(() => guest.shutdown());
  // Warm both paths once (connection, keymap, page paint).
  await (await post("/click", { x: 5, y: 790 })).text();
  // Wait until the busy page is painted: its PNG is far larger than a blank window's.
  let pngBytes = 0;
  for (const deadline = Date.now() + 15_000; pngBytes < 150_000 && Date.now() < deadline;) {
    pngBytes = (await (await get("/screenshot?format=png")).arrayBuffer()).byteLength;
  }
  console.log(`screenshot of the busy page: ${pngBytes} bytes of PNG`);

  const clickOnce = async () => {
    const response = await post("/click", { x: 5, y: 790 });
    if (response.status !== 200) throw new Error(await response.text());
    await response.text();
  };
  // A click answers once the press is performed; the X server holds the release CLICK_GAP_MS.
  // Idle between rounds (untimed) measures one click; back to back shows the gap's bound.
  const click = await median(clickOnce, { idleMs: 30 });
  const clickBackToBack = await median(clickOnce);
  const xdotool = await median(async () => {
    await run("xdotool", ["mousemove", "5", "790", "click", "1"], display);
  }, { idleMs: 30 });
  const shot = await median(async () => {
    const response = await get("/screenshot?format=png");
    if (response.status !== 200) throw new Error(await response.text());
    await response.arrayBuffer();
  });
  const imported = await median(async () => {
    await run("import", ["-window", "root", "png:-"], display);
  });
  printTable([
    {
      what: "POST /v1/cua/click over loopback HTTP (held XTEST connection)",
      unit: "ms",
      value: click,
      baselineWhat: "xdotool mousemove … click 1",
      baseline: xdotool,
      target: "<= 0.1",
    },
    {
      what: "the same click, back to back (bound by the 12 ms gap)",
      unit: "ms",
      value: clickBackToBack,
      baselineWhat: "xdotool mousemove … click 1",
      baseline: xdotool,
      target: "<= 0.2",
    },
    {
      what: "GET /v1/cua/screenshot PNG, busy page",
      unit: "ms",
      value: shot,
      baselineWhat: "import -window root png:-",
      baseline: imported,
      target: "<= 0.3",
    },
  ]);
} finally {
  for (const stop of stops) await stop();
  await desktop.stop();
  await server.shutdown();
  await Deno.remove(workspace, { recursive: true });
}

async function median(
  work: () => Promise<void>,
  options: { idleMs?: number } = {},
): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (options.idleMs) await new Promise((resolve) => setTimeout(resolve, options.idleMs));
    const t = performance.now();
    await work();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

async function run(command: string, args: string[], display: string): Promise<void> {
  const out = await new Deno.Command(command, {
    args,
    env: { DISPLAY: display },
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!out.success) throw new Error(`${command} failed with status ${out.code}`);
}

function freeDisplay(): string {
  for (let n = 300 + Math.floor(Math.random() * 200); n < 1000; n++) {
    try {
      Deno.statSync(`/tmp/.X11-unix/X${n}`);
    } catch {
      return `:${n}`;
    }
  }
  throw new Error("no free X display");
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
