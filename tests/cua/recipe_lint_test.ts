import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { lintRecipe, MAX_STEPS } from "../../mod/cua/recipe_lint.ts";
import { BatchBody } from "../../mod/cua/schemas.ts";

const SIZE = { width: 1280, height: 800 };
const plan = (steps: unknown[], extra: Record<string, unknown> = {}) =>
  BatchBody.parse({ steps, ...extra });

Deno.test("a plan whose every point is inside the framebuffer has no problems", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({ x: fc.integer({ min: 0, max: 1279 }), y: fc.integer({ min: 0, max: 799 }) }),
        { minLength: 1, maxLength: 40 },
      ),
      (points) => {
        const steps = points.map((p, i) =>
          i % 3 === 0
            ? { op: "click", ...p }
            : i % 3 === 1
            ? { op: "drag", x1: p.x, y1: p.y, x2: 0, y2: 0, path: [p] }
            : { op: "scroll", ...p, dy: 120 }
        );
        assertEquals(lintRecipe(plan(steps), SIZE), []);
      },
    ),
  );
});

Deno.test("any point outside the framebuffer is reported with its step index", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 30 }),
      fc.oneof(
        fc.record({
          x: fc.integer({ min: 1280, max: 40000 }),
          y: fc.integer({ min: 0, max: 799 }),
        }),
        fc.record({
          x: fc.integer({ min: 0, max: 1279 }),
          y: fc.integer({ min: 800, max: 40000 }),
        }),
        fc.record({ x: fc.integer({ min: -5000, max: -1 }), y: fc.integer({ min: 0, max: 799 }) }),
      ),
      fc.constantFrom("click", "move", "double_click", "mouse_down", "scroll", "mouse_up"),
      (before, point, op) => {
        const steps: unknown[] = Array(before).fill({ op: "wait", ms: 1 });
        steps.push({ op, ...point, ...(op === "scroll" ? { dy: 1 } : {}) });
        const problems = lintRecipe(plan(steps), SIZE);
        assertEquals(problems.length, 1);
        assertEquals(problems[0].code, "out_of_range");
        assert(problems[0].message.startsWith(`step ${before} (${op})`), problems[0].message);
      },
    ),
  );
});

Deno.test("the lint refuses empty plans, more than 256 steps and waits over 10 s", () => {
  assertEquals(lintRecipe(plan([]), SIZE).map((p) => p.message), ["the recipe has no steps"]);
  const wait = { op: "wait", ms: 10_000 };
  assertEquals(lintRecipe(plan(Array(MAX_STEPS).fill(wait)), SIZE), []);
  assertEquals(lintRecipe(plan(Array(MAX_STEPS + 1).fill(wait)), SIZE).length, 1);
  assertEquals(lintRecipe(plan([{ op: "wait", ms: 10_001 }]), SIZE)[0].code, "invalid_request");
});

Deno.test("the lint refuses a drag path point outside and a key that is not a chord", () => {
  const drag = {
    op: "drag",
    x1: 0,
    y1: 0,
    x2: 10,
    y2: 10,
    path: [{ x: 5, y: 5 }, { x: 5, y: 801 }],
  };
  assertEquals(lintRecipe(plan([drag]), SIZE)[0].message.includes("path[1]"), true);
  assertEquals(lintRecipe(plan([{ op: "key", key: "ctrl+" }]), SIZE)[0].code, "invalid_request");
  assertEquals(lintRecipe(plan([{ op: "key", key: "ctrl+shift+t" }]), SIZE), []);
});
