/** The host service: ready, info, egress, CORS, and the mounts issue 8 adds for the desktop. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  createHostApp,
  GUEST_DEFAULTS,
  GuestError,
  type HostExtras,
} from "../../mod/exec-guest/mod.ts";
import { call, withGuest } from "./helpers.ts";

Deno.test("info without extras reports desktop, chrome and cua disabled and egress off", async () => {
  await withGuest({ boxId: "box-9" }, async (guest) => {
    const info = await call(guest, `${guest.host}/v1/info`);
    assertEquals(info.body.box_id, "box-9");
    assertEquals(info.body.service, "box-host");
    assertEquals(info.body.protocol, "v1");
    assertEquals(info.body.version.protocol, "v1");
    assertEquals(info.body.capabilities, {
      exec: { enabled: true, ready: true },
      files: { enabled: true, ready: true },
      desktop: { enabled: false, ready: false },
      chrome: { enabled: false, ready: false },
      cua: { enabled: false, ready: false },
      egress_tunnel: { enabled: false, ready: false },
    });
    const egress = await call(guest, `${guest.host}/v1/egress`);
    assertEquals(egress.body.enabled, false);
    assertEquals(egress.body.ready, false);
  });
});

Deno.test("with BOX_DESKTOP_REQUIRED=1 ready follows desktopReady: 503 not_ready, then 200", async () => {
  let up = false;
  const extras: HostExtras = { mounts: [], desktopReady: () => Promise.resolve(up) };
  await withGuest({ desktopRequired: true }, async (guest) => {
    const down = await call(guest, `${guest.host}/v1/ready`);
    assertEquals(down.status, 503);
    assertEquals(down.body.error.code, "not_ready");
    assertStringIncludes(down.body.error.message, "see runbook.md#guest-not-ready");
    up = true;
    const ready = await call(guest, `${guest.host}/v1/ready`);
    assertEquals(ready.status, 200);
    assertEquals(ready.body.desktop_ready, true);
  }, { extras });
});

Deno.test("without the desktop required, a display that is down does not stop ready", async () => {
  const extras: HostExtras = { mounts: [], desktopReady: () => Promise.resolve(false) };
  await withGuest({}, async (guest) => {
    const ready = await call(guest, `${guest.host}/v1/ready`);
    assertEquals(ready.status, 200);
    assertEquals(ready.body.desktop_ready, false);
  }, { extras });
});

Deno.test("mounted routes get bearer auth, the request id and the one error shape", async () => {
  const desktop = new OpenAPIHono();
  desktop.openapi(
    createRoute({
      method: "get",
      path: "/",
      responses: {
        200: {
          description: "ok",
          content: { "application/json": { schema: z.object({ ok: z.boolean() }) } },
        },
      },
    }),
    (c) => c.json({ ok: true }, 200),
  );
  desktop.get("/broken", () => {
    throw new GuestError("display_unavailable", 503, "the X display is down");
  });
  const extras: HostExtras = { mounts: [{ path: "/v1/desktop", app: desktop }] };
  await withGuest({}, async (guest) => {
    const bare = await fetch(`${guest.host}/v1/desktop`);
    assertEquals(bare.status, 401);
    await bare.body?.cancel();
    const ok = await call(guest, `${guest.host}/v1/desktop`, { headers: { "x-request-id": "r1" } });
    assertEquals(ok.body, { ok: true });
    assertEquals(ok.headers.get("x-request-id"), "r1");
    const broken = await call(guest, `${guest.host}/v1/desktop/broken`);
    assertEquals(broken.status, 503);
    assertEquals(broken.body, {
      error: { code: "display_unavailable", message: "the X display is down", status: 503 },
    });
  }, { extras });
});

Deno.test("CORS answers only the allowlisted origin; with no list no CORS header is sent", async () => {
  await withGuest({ corsOrigins: ["https://app.example"] }, async (guest) => {
    const allowed = await fetch(`${guest.exec}/v1/status`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST" },
    });
    await allowed.body?.cancel();
    assertEquals(allowed.headers.get("access-control-allow-origin"), "https://app.example");
    const other = await call(guest, `${guest.exec}/v1/status`, {
      headers: { origin: "https://evil.example" },
    });
    assertEquals(other.headers.get("access-control-allow-origin"), null);
    const preflight = await fetch(`${guest.exec}/v1/status`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    await preflight.body?.cancel();
    assertEquals(preflight.headers.get("access-control-allow-origin"), null);
  });
  await withGuest({}, async (guest) => {
    const none = await call(guest, `${guest.exec}/v1/status`, {
      headers: { origin: "https://app.example" },
    });
    assertEquals(none.headers.get("access-control-allow-origin"), null);
  });
});

Deno.test("POST /v1/shutdown on the host service asks the daemon to stop", async () => {
  let asked = 0;
  const host = createHostApp({
    settings: {
      ...GUEST_DEFAULTS,
      token: "t",
      hostToken: "t",
      corsOrigins: [],
      desktopRequired: false,
    },
    endpoints: { exec: "http://127.0.0.1:1", host: "http://127.0.0.1:2" },
    execReady: () => Promise.resolve(false),
    onShutdown: () => asked++,
  });
  const response = await host.app.request("/v1/shutdown", {
    method: "POST",
    headers: { authorization: "Bearer t" },
  });
  assertEquals(await response.json(), { status: "shutting_down" });
  await Promise.resolve();
  assertEquals(asked, 1);
  const ready = await host.app.request("/v1/ready", { headers: { authorization: "Bearer t" } });
  assertEquals(ready.status, 503, "the exec service does not answer, so the guest is not ready");
  assert((await ready.text()).includes("not_ready"));
});
