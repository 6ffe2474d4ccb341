/**
 * `gurt guest` without --desktop: the desktop's status routes answer their documented shapes with
 * enabled: false (windows: an empty list), and every /v1/cua route answers 503 cua_disabled saying
 * how to turn computer use on (docs/guest-api.md#host-desktop-and-computer-use); nothing answers
 * 404.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { call, withDaemon } from "./helpers.ts";

Deno.test("without --desktop, /v1/desktop, /v1/chrome and /v1/windows answer enabled: false", async () => {
  await withDaemon({}, async (guest) => {
    const desktop = await call(guest, `${guest.host}/v1/desktop`);
    assertEquals([desktop.status, desktop.body], [200, {
      enabled: false,
      ready: false,
      available: false,
      display: ":1",
      geometry: "1280x800x24",
      vnc: null,
      viewer: null,
    }]);
    const chrome = await call(guest, `${guest.host}/v1/chrome`);
    assertEquals([chrome.status, chrome.body], [200, {
      enabled: false,
      ready: false,
      running: false,
      profile: null,
      cdp: "127.0.0.1:9222",
      display: ":1",
    }]);
    const windows = await call(guest, `${guest.host}/v1/windows`);
    assertEquals([windows.status, windows.body], [200, { windows: [] }]);
    const anonymous = await fetch(`${guest.host}/v1/desktop`);
    await anonymous.body?.cancel();
    assertEquals(anonymous.status, 401, "the status routes still need the bearer token");
  });
});

Deno.test("without --desktop, /v1/desktop reports the display and geometry --desktop would use", async () => {
  await withDaemon({ BOX_DISPLAY: ":7", BOX_DISPLAY_GEOM: "1024x768x24" }, async (guest) => {
    const desktop = await call(guest, `${guest.host}/v1/desktop`);
    assertEquals([desktop.body.display, desktop.body.geometry], [":7", "1024x768x24"]);
  });
});

Deno.test("without --desktop, every /v1/cua route answers 503 cua_disabled naming --desktop", async () => {
  await withDaemon({}, async (guest) => {
    const routes: [string, unknown][] = [
      ["/v1/cua/screenshot", undefined],
      ["/v1/cua/click", { x: 1, y: 1 }],
      ["/v1/cua/mousedown", { x: 1, y: 1 }],
      ["/v1/cua/type", { text: "hello" }],
      ["/v1/cua/key", { key: "Return" }],
      ["/v1/cua/batch", { steps: [{ op: "wait", ms: 1 }] }],
    ];
    for (const [path, body] of routes) {
      const answer = await call(
        guest,
        `${guest.host}${path}`,
        body === undefined ? {} : { method: "POST", json: body },
      );
      assertEquals(answer.status, 503, `${path}: ${answer.text}`);
      assertEquals(answer.body.error, {
        code: "cua_disabled",
        status: 503,
        message: answer.body.error.message,
      });
      assertStringIncludes(answer.body.error.message, "--desktop");
      assertStringIncludes(answer.body.error.message, "see runbook.md#cua-disabled");
    }
  });
});
