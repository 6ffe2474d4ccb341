/**
 * The /v1/cua routes (docs/guest-api.md#host-desktop-and-computer-use) as an OpenAPIHono app:
 * screenshot, the single input routes with their aliases, and batch recipes. Errors are thrown as
 * GuestErrors for the host's one handler.
 */
import { createRoute, OpenAPIHono, type z } from "@hono/zod-openapi";
import { ErrorBody, type GuestError, validationHook } from "../exec-guest/mod.ts";
import type { Cua } from "./cua_service.ts";
import type { DevTools } from "./devtools.ts";
import { runRecipe } from "./recipe_runner.ts";
import {
  BatchBody,
  ClickBody,
  DragBody,
  KeyBody,
  MouseUpBody,
  MoveBody,
  OkResponse,
  ReceiptResponse,
  ScreenshotJson,
  ScreenshotQuery,
  ScrollBody,
  type Step,
  TypeBody,
} from "./schemas.ts";
import { Buffer } from "node:buffer";

/** What the CUA routes act on. */
export interface CuaRouteContext {
  /** Why every route answers 503 (BOX_CUA=0, or no desktop), or null when computer use runs. */
  refusal: (() => GuestError) | null;
  cua: Cua;
  devtools: DevTools;
  workspace: string;
}

const errors = {
  400: { description: "invalid_request or out_of_range", content: json(ErrorBody) },
  502: {
    description: "cua_backend: the X server refused the request",
    content: json(ErrorBody),
  },
  503: {
    description: "cua_disabled (BOX_CUA=0, or the guest runs without --desktop) or " +
      "display_unavailable",
    content: json(ErrorBody),
  },
};

/** The /v1/cua app; mount it at /v1/cua. */
export function cuaRoutes(context: CuaRouteContext): OpenAPIHono {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  app.use("*", async (_c, next) => {
    if (context.refusal !== null) throw context.refusal();
    await next();
  });

  app.openapi(
    createRoute({
      method: "get",
      path: "/screenshot",
      summary: "Capture the root window of BOX_DISPLAY as PNG (JSON with base64, or raw)",
      request: { query: ScreenshotQuery },
      responses: {
        200: {
          description: "the screenshot",
          content: {
            "application/json": { schema: ScreenshotJson },
            "image/png": { schema: { type: "string", format: "binary" } },
          },
        },
        ...errors,
      },
    }),
    async (c) => {
      const shot = await context.cua.exclusive(() => context.cua.screenshot());
      const raw = c.req.valid("query").format === "png" ||
        (c.req.header("accept") ?? "").includes("image/png");
      if (raw) {
        return new Response(shot.png, { status: 200, headers: { "content-type": "image/png" } });
      }
      return c.json({
        encoding: "base64" as const,
        mime: "image/png" as const,
        width: shot.width,
        height: shot.height,
        bytes: shot.png.length,
        png_base64: Buffer.from(shot.png).toString("base64"),
      }, 200);
    },
  );

  const input = <S extends z.ZodType>(
    path: string,
    summary: string,
    schema: S,
    toStep: (body: z.infer<S>) => Step,
  ) => {
    app.openapi(
      createRoute({
        method: "post",
        path,
        summary,
        request: { body: { content: json(schema), required: true } },
        responses: { 200: { description: "done", content: json(OkResponse) }, ...errors },
      }),
      async (c) => {
        // The validator ran with this route's schema; a generic route loses its precise type.
        const body = (c.req as unknown as { valid(target: "json"): unknown }).valid("json");
        const step = toStep(body as z.infer<S>);
        context.cua.checkRange(step);
        await context.cua.exclusive(() => context.cua.perform(step));
        return c.json({ ok: true as const }, 200);
      },
    );
  };

  input("/click", "Move, press, a short gap, release", ClickBody, (b) => ({ op: "click", ...b }));
  for (const path of ["/mouse_down", "/mousedown"]) {
    input(path, "Move then press; no release", ClickBody, (b) => ({ op: "mouse_down", ...b }));
  }
  for (const path of ["/mouse_up", "/mouseup"]) {
    input(
      path,
      "Optional motion path, then release",
      MouseUpBody,
      (b) => ({ op: "mouse_up", ...b }),
    );
  }
  input(
    "/double_click",
    "Two clicks at the point",
    ClickBody,
    (b) => ({ op: "double_click", ...b }),
  );
  input("/move", "Hover; no button", MoveBody, (b) => ({ op: "move", ...b }));
  input("/drag", "Press, interpolated or given motion, release", DragBody, (b) => ({
    op: "drag",
    ...b,
  }));
  input("/type", "Type text through XTEST", TypeBody, (b) => ({ op: "type", ...b }));
  input("/key", "Tap, press or release a key or chord", KeyBody, (b) => ({ op: "key", ...b }));
  input("/scroll", "Wheel notches at a point (120 units a notch)", ScrollBody, (b) => ({
    op: "scroll",
    ...b,
  }));

  app.openapi(
    createRoute({
      method: "post",
      path: "/batch",
      summary: "Lint, then run many CUA steps in order; answers a receipt",
      request: { body: { content: json(BatchBody), required: true } },
      responses: { 200: { description: "the receipt", content: json(ReceiptResponse) }, ...errors },
    }),
    async (c) => {
      const receipt = await runRecipe(c.req.valid("json"), context);
      return c.json(receipt, 200);
    },
  );
  return app;
}

function json<S>(schema: S): { "application/json": { schema: S } } {
  return { "application/json": { schema } };
}
