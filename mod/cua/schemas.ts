/**
 * The CUA request and response bodies, written once with zod: they validate, type the handlers, and
 * generate the guest's openapi.yaml. `z` comes from @hono/zod-openapi, which extends zod v4 with
 * `.openapi()`.
 */
import { z } from "@hono/zod-openapi";

const coord = z.number().int().openapi({ description: "pixels from the framebuffer's origin" });
const button = z.number().int().min(1).max(7).default(1).openapi({
  description: "X button 1-7 (1 left, 2 middle, 3 right)",
});
const point = z.strictObject({ x: coord, y: coord });
const path = z.array(point).max(64).openapi({ description: "motion path, at most 64 points" });

/** A point and a button: click, double_click, mouse_down. */
export const ClickBody = z.strictObject({ x: coord, y: coord, button }).openapi("CuaClick");
/** Release, after an optional motion path; x and y both set or both omitted. */
export const MouseUpBody = z.strictObject({
  x: coord.optional(),
  y: coord.optional(),
  button,
  path: path.optional(),
}).refine((b) => (b.x === undefined) === (b.y === undefined), {
  message: "x and y must both be set or both be omitted",
}).openapi("CuaMouseUp");
/** Hover. */
export const MoveBody = z.strictObject({ x: coord, y: coord }).openapi("CuaMove");
/** Press at (x1, y1), move, release at (x2, y2). */
export const DragBody = z.strictObject({
  x1: coord,
  y1: coord,
  x2: coord,
  y2: coord,
  button,
  path: path.optional(),
}).openapi("CuaDrag");
/** Text typed through XTEST. */
export const TypeBody = z.strictObject({
  text: z.string().min(1).max(4096).openapi({ description: "1 to 4096 characters" }),
}).openapi("CuaType");
/** One key or chord. */
export const KeyBody = z.strictObject({
  key: z.string().min(1).max(64).openapi({ description: "X keysym or chord: Return, ctrl+l" }),
  action: z.enum(["tap", "down", "up"]).default("tap"),
}).openapi("CuaKey");
/** Wheel notches at a point: 120 units a notch, positive dy down, positive dx right. */
export const ScrollBody = z.strictObject({
  x: coord,
  y: coord,
  dx: z.number().int().default(0),
  dy: z.number().int().default(0),
}).refine((b) => b.dx !== 0 || b.dy !== 0, {
  message: "at least one of dx and dy must be non-zero",
}).openapi("CuaScroll");

/** The answer of every single input route. */
export const OkResponse = z.object({ ok: z.literal(true) }).openapi("CuaOk");

/** A screenshot as JSON. */
export const ScreenshotJson = z.object({
  encoding: z.literal("base64"),
  mime: z.literal("image/png"),
  width: z.number().int(),
  height: z.number().int(),
  bytes: z.number().int(),
  png_base64: z.string(),
}).openapi("CuaScreenshot");

/** ?format=png asks for the raw bytes. */
export const ScreenshotQuery = z.object({
  format: z.enum(["json", "png"]).optional().openapi({
    param: { name: "format", in: "query" },
    description: "png for raw bytes (same as Accept: image/png)",
  }),
});

const step = <T extends string, S extends z.ZodRawShape>(op: readonly [T, ...T[]], shape: S) =>
  z.strictObject({ op: z.enum(op), ...shape });

/** One step of a recipe. */
export const StepBody = z.discriminatedUnion("op", [
  step(["click", "double_click", "mouse_down", "mousedown"], { x: coord, y: coord, button }),
  step(["mouse_up", "mouseup"], {
    x: coord.optional(),
    y: coord.optional(),
    button,
    path: path.optional(),
  }),
  step(["move"], { x: coord, y: coord }),
  step(["drag"], { x1: coord, y1: coord, x2: coord, y2: coord, button, path: path.optional() }),
  step(["type"], { text: z.string().min(1).max(4096) }),
  step(["key"], {
    key: z.string().min(1).max(64),
    action: z.enum(["tap", "down", "up"]).default("tap"),
  }),
  step(["scroll"], {
    x: coord,
    y: coord,
    dx: z.number().int().default(0),
    dy: z.number().int().default(0),
  }),
  step(["wait"], { ms: z.number().int().min(0) }),
  step(["screenshot"], {}),
  step(["reset_desktop"], {}),
]).openapi("CuaStep");

/** A batch recipe. */
export const BatchBody = z.strictObject({
  name: z.string().max(200).optional(),
  stop_on_error: z.boolean().default(true),
  screenshot: z.enum(["none", "end", "each"]).default("end"),
  record: z.boolean().default(false),
  artifact_dir: z.string().min(1).max(1024).optional().openapi({
    description: "workspace-relative folder for PNG and MP4 artifacts",
  }),
  settle: z.enum(["off", "compressed", "raw"]).default("off"),
  observe: z.enum(["off", "input", "page"]).default("off"),
  steps: z.array(StepBody),
}).openapi("CuaBatch");

const WindowInfo = z.object({ id: z.string(), class: z.string(), title: z.string() });

const Observed = z.object({
  target: WindowInfo.optional(),
  focus: z.object({
    state: z.enum(["none", "pointer_root", "root", "window"]),
    id: z.string().optional(),
    class: z.string().optional(),
    title: z.string().optional(),
  }).optional(),
  url_before: z.string().optional(),
  url_after: z.string().optional(),
  observe_ms: z.number().int(),
}).openapi("CuaObserved");

const Picture = z.object({
  mime: z.literal("image/png"),
  width: z.number().int(),
  height: z.number().int(),
  bytes: z.number().int(),
  path: z.string().optional(),
  png_base64: z.string().optional(),
});

/** What a recipe did, step by step. */
export const ReceiptResponse = z.object({
  ok: z.boolean(),
  ran: z.number().int(),
  stopped_at: z.number().int().nullable(),
  duration_ms: z.number().int(),
  steps: z.array(z.object({
    index: z.number().int(),
    op: z.string(),
    ok: z.boolean(),
    ms: z.number().int(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    observed: Observed.optional(),
    screenshot: Picture.optional(),
  })),
  screenshot: Picture.optional(),
  artifacts: z.array(z.object({
    kind: z.enum(["screenshot", "video"]),
    path: z.string(),
    mime: z.string(),
    bytes: z.number().int(),
  })),
  observe: z.enum(["input", "page"]).optional(),
}).openapi("CuaReceipt");

/** One parsed recipe step. */
export type Step = z.infer<typeof StepBody>;
/** A parsed recipe. */
export type Batch = z.infer<typeof BatchBody>;
/** A recipe's receipt. */
export type Receipt = z.infer<typeof ReceiptResponse>;
/** One step's line of the receipt. */
export type StepReceipt = Receipt["steps"][number];
/** A step's observed block. */
export type Observation = z.infer<typeof Observed>;
/** A screenshot on the receipt: inline base64 or a workspace path. */
export type PictureInfo = z.infer<typeof Picture>;
