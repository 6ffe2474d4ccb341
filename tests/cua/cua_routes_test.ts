/**
 * The CUA routes without a running desktop: the states that refuse before anything moves
 * (BOX_CUA=0, a display nobody serves, a bad body, a bad plan), and the published OpenAPI paths.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { createDesktop } from "../../mod/cua/mod.ts";
import { call, mountApp, testOptions } from "./fixture.ts";

function desktopWith(overrides: Parameters<typeof testOptions>[1] = {}) {
  const desktop = createDesktop(testOptions("/nonexistent-workspace", overrides));
  return { desktop, app: mountApp(desktop) };
}

Deno.test("BOX_CUA=0 answers 503 cua_disabled on every CUA route, with a runbook pointer", async () => {
  const { app } = desktopWith({ cua: false });
  for (
    const [path, body] of [
      ["/v1/cua/screenshot", undefined],
      ["/v1/cua/click", { x: 1, y: 1 }],
      ["/v1/cua/batch", { steps: [] }],
    ] as const
  ) {
    const response = await call(app, path, body);
    assertEquals([response.status, response.body.error.code], [503, "cua_disabled"], path);
    assertStringIncludes(response.body.error.message, "see runbook.md#cua-disabled");
  }
});

Deno.test("a display nobody serves answers 503 display_unavailable, and ready() is false", async () => {
  const { desktop, app } = desktopWith();
  const response = await call(app, "/v1/cua/click", { x: 10, y: 10 });
  assertEquals([response.status, response.body.error.code], [503, "display_unavailable"]);
  assertStringIncludes(response.body.error.message, "see runbook.md#desktop-display-unavailable");
  const shot = await call(app, "/v1/cua/screenshot");
  assertEquals(shot.status, 503);
  assertEquals(await desktop.ready(), false);
  const status = (await call(app, "/v1/desktop")).body;
  assertEquals([status.ready, status.available, status.vnc], [false, false, null]);
  assertEquals((await call(app, "/v1/windows")).body, { windows: [] });
  assertEquals(await desktop.capabilities(), {
    desktop: { enabled: true, ready: false },
    chrome: { enabled: true, ready: false },
    cua: { enabled: true, ready: false },
  });
  await desktop.stop();
});

Deno.test("coordinates outside the 1280x800 framebuffer answer 400 out_of_range", async () => {
  const { app } = desktopWith();
  for (
    const [path, body] of [
      ["/v1/cua/click", { x: 1280, y: 0 }],
      ["/v1/cua/move", { x: 0, y: 800 }],
      ["/v1/cua/click", { x: -1, y: 5 }],
      ["/v1/cua/drag", { x1: 0, y1: 0, x2: 5000, y2: 5 }],
      ["/v1/cua/mouseup", { path: [{ x: 2000, y: 1 }] }],
    ] as const
  ) {
    const response = await call(app, path, body);
    assertEquals([response.status, response.body.error.code], [400, "out_of_range"], path);
    assertStringIncludes(response.body.error.message, "1280x800");
  }
});

Deno.test("a bad body answers 400 invalid_request naming the field", async () => {
  const { app } = desktopWith();
  const cases: [string, unknown, string][] = [
    ["/v1/cua/click", { x: 1, y: 1, button: 8 }, "button"],
    ["/v1/cua/click", { x: 1.5, y: 1 }, "x"],
    ["/v1/cua/mouse_up", { x: 1 }, "x and y must both be set"],
    ["/v1/cua/type", { text: "" }, "text"],
    ["/v1/cua/key", { key: "ctrl+l; rm" }, "whitespace"],
    ["/v1/cua/key", { key: "ctrl+nosuchkey" }, "nosuchkey"],
    ["/v1/cua/scroll", { x: 1, y: 1, dx: 0, dy: 0 }, "non-zero"],
    ["/v1/cua/click", { x: 1, y: 1, extra: true }, "extra"],
    ["/v1/cua/batch", { steps: [{ op: "explode" }] }, "op"],
  ];
  for (const [path, body, part] of cases) {
    const response = await call(app, path, body);
    assertEquals([response.status, response.body.error.code], [400, "invalid_request"], path);
    assertStringIncludes(response.body.error.message, part);
  }
});

Deno.test("a bad plan answers 400 before the display is touched", async () => {
  // The display does not exist: a plan that got past the lint would answer 503 instead.
  const { app } = desktopWith();
  const move = { op: "move", x: 1, y: 1 };
  const cases: [unknown, string, string][] = [
    [{ steps: [] }, "invalid_request", "no steps"],
    [{ steps: Array(257).fill(move) }, "invalid_request", "257 steps"],
    [{ steps: [move, { op: "wait", ms: 10_001 }] }, "invalid_request", "10000 ms"],
    [{ steps: [move, { op: "click", x: 1, y: 900 }] }, "out_of_range", "step 1 (click)"],
    [{ steps: [{ op: "key", key: "ctrl+nosuchkey" }] }, "invalid_request", "step 0 (key)"],
    [{ record: true, steps: [move] }, "invalid_request", "artifact_dir"],
  ];
  for (const [body, code, part] of cases) {
    const response = await call(app, "/v1/cua/batch", body);
    assertEquals([response.status, response.body.error.code], [400, code], part);
    assertStringIncludes(response.body.error.message, part);
    assertStringIncludes(response.body.error.message, "nothing moved");
  }
  const ok = await call(app, "/v1/cua/batch", { steps: Array(256).fill(move) });
  assertEquals([ok.status, ok.body.error.code], [503, "display_unavailable"]);
});

Deno.test("the routes publish their schemas in the OpenAPI document under the mount paths", () => {
  const desktop = createDesktop(testOptions("/nonexistent-workspace"));
  const host = new OpenAPIHono();
  for (const mount of desktop.mounts()) host.route(mount.path, mount.app);
  const doc = host.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
  const paths = Object.keys(doc.paths ?? {});
  for (
    const path of [
      "/v1/cua/screenshot",
      "/v1/cua/click",
      "/v1/cua/mousedown",
      "/v1/cua/mouse_down",
      "/v1/cua/mouseup",
      "/v1/cua/mouse_up",
      "/v1/cua/double_click",
      "/v1/cua/move",
      "/v1/cua/drag",
      "/v1/cua/type",
      "/v1/cua/key",
      "/v1/cua/scroll",
      "/v1/cua/batch",
      "/v1/desktop",
      "/v1/chrome",
      "/v1/windows",
    ]
  ) {
    assert(paths.includes(path), `${path} missing from ${paths.join(", ")}`);
  }
  const schemas = Object.keys(doc.components?.schemas ?? {});
  for (const name of ["CuaBatch", "CuaStep", "CuaReceipt", "CuaClick", "DesktopStatus"]) {
    assert(schemas.includes(name), `${name} missing from ${schemas.join(", ")}`);
  }
});

Deno.test("an artifact_dir outside the workspace answers 400 path_escape", async () => {
  const workspace = await Deno.makeTempDir({ prefix: "gurt-cua-ws-" });
  const outside = await Deno.makeTempDir({ prefix: "gurt-cua-out-" });
  try {
    await Deno.symlink(outside, `${workspace}/link`);
    const desktop = createDesktop(testOptions(workspace));
    const app = mountApp(desktop);
    const move = { op: "move", x: 1, y: 1 };
    for (const dir of ["../x", "/etc", "link/sub"]) {
      const response = await call(app, "/v1/cua/batch", { artifact_dir: dir, steps: [move] });
      assertEquals([response.status, response.body.error.code], [400, "path_escape"], dir);
    }
    assertEquals([...Deno.readDirSync(outside)], [], "nothing was created outside");
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});
