/**
 * The supervisor watches the desktop: a Chromium that crashes and an Xvfb that dies are started
 * again (with everything that needs the X server), and input reconnects by itself.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  call,
  hasXvfb,
  hoverUntilSeen,
  type PageEvent,
  RecordingPage,
  startDesktop,
} from "./fixture.ts";
import { DESKTOP_WAIT, pidOf } from "./desktop_probes.ts";
import { until } from "../kit/mod.ts";

const last = (events: PageEvent[], type: string) => events.filter((e) => e.type === type).at(-1);

Deno.test({
  name: "the supervisor",
  ignore: !hasXvfb(),
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const workspace = await Deno.makeTempDir({ prefix: "gurt-cua-sup-" });
  const page = new RecordingPage();
  const { desktop, app, options } = await startDesktop(workspace, {
    startUrl: page.url("/"),
    vncPassword: "watchme",
  });
  const steps = { sanitizeOps: false, sanitizeResources: false, sanitizeExit: false };
  try {
    await page.until("the page loading", (events) => last(events, "load"));
    await t.step({
      ...steps,
      name: "a Chromium that crashes is started again and answers DevTools",
      fn: async () => {
        const before = await pidOf("chromium", options.display);
        page.clear();
        Deno.kill(before, "SIGKILL");
        await until(async () => {
          const chrome = (await call(app, "/v1/chrome")).body;
          const pid = await pidOf("chromium", options.display).catch(() => before);
          return chrome.ready && chrome.running && pid !== before;
        }, { ...DESKTOP_WAIT, what: "Chromium running again under a new pid" });
        await page.until("the page loading again", (events) => last(events, "load"));
      },
    });

    await t.step({
      ...steps,
      name: "an Xvfb that dies is started again, and input reconnects to it",
      fn: async () => {
        const before = await pidOf("Xvfb", options.display);
        page.clear();
        Deno.kill(before, "SIGKILL");
        const down = await call(app, "/v1/cua/click", { x: 700, y: 450 });
        assert(
          down.status === 200 || down.body.error.code === "display_unavailable",
          JSON.stringify(down.body),
        );
        await until(async () => {
          const desktopReady = (await call(app, "/v1/desktop")).body.ready;
          return desktopReady && (await call(app, "/v1/chrome")).body.ready;
        }, { ...DESKTOP_WAIT, what: "the desktop ready again with Chromium" });
        assert((await pidOf("Xvfb", options.display)) !== before);
        await page.until("the page loading again", (events) => last(events, "load"));
        await hoverUntilSeen(app, page, { x: 700, y: 400 });
        page.clear();
        assertEquals((await call(app, "/v1/cua/click", { x: 705, y: 455 })).status, 200);
        const click = await page.until(
          "a click after the restart",
          (events) => last(events, "click"),
        );
        assertEquals([click.x, click.y], [705, 455]);
      },
    });
  } finally {
    await desktop.stop();
    await page.close();
    await Deno.remove(workspace, { recursive: true });
  }
});
