/**
 * A bare 16-bit X server (no window manager, no Chromium): input still works, a screenshot is
 * 502 cua_backend, and in a recipe that failure is one step's, which stop_on_error respects.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { createDesktop } from "../../mod/cua/mod.ts";
import { call, hasXvfb, mountApp, pointerByXdotool, testOptions } from "./fixture.ts";

Deno.test({
  name: "on a 16-bit display a screenshot is cua_backend, and a recipe stops at that step",
  ignore: !hasXvfb(),
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const workspace = await Deno.makeTempDir({ prefix: "gurt-cua-16-" });
  const options = testOptions(workspace, {
    geometry: "1280x800x16",
    chromeProfile: null,
    windowManager: false,
  });
  const desktop = createDesktop(options);
  try {
    await desktop.start();
    const app = mountApp(desktop);
    assertEquals(await desktop.ready(), true);
    const shot = await call(app, "/v1/cua/screenshot");
    assertEquals([shot.status, shot.body.error.code], [502, "cua_backend"]);
    assertStringIncludes(shot.body.error.message, "see runbook.md#cua-backend");

    const steps = [
      { op: "move", x: 100, y: 100 },
      { op: "screenshot" },
      { op: "move", x: 200, y: 200 },
    ];
    const stopped = (await call(app, "/v1/cua/batch", { steps, screenshot: "end" })).body;
    assertEquals(
      [stopped.ok, stopped.ran, stopped.stopped_at, stopped.screenshot],
      [false, 2, 1, undefined],
    );
    assertEquals(stopped.steps[1].error.code, "cua_backend");
    assertEquals(await pointerByXdotool(options.display), { x: 100, y: 100 });

    const goOn = (await call(app, "/v1/cua/batch", {
      steps,
      stop_on_error: false,
      screenshot: "none",
    })).body;
    assertEquals([goOn.ok, goOn.ran, goOn.stopped_at], [false, 3, null]);
    assertEquals(goOn.steps.map((s: { ok: boolean }) => s.ok), [true, false, true]);
    assertEquals(await pointerByXdotool(options.display), { x: 200, y: 200 });
  } finally {
    await desktop.stop();
    await Deno.remove(workspace, { recursive: true });
  }
});
