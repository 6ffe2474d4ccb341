/**
 * The lint a recipe passes before anything moves: not empty, at most 256 steps, every coordinate
 * inside the framebuffer, every wait at most 10 s, every key a chord we can press. Pure.
 */
import { parseChord } from "./keys.ts";
import type { Batch, Step } from "./schemas.ts";

/** Most steps in one recipe. */
export const MAX_STEPS = 256;
/** Longest wait step, in milliseconds. */
export const MAX_WAIT_MS = 10_000;

/** One thing wrong with a plan. */
export interface LintProblem {
  code: "invalid_request" | "out_of_range";
  message: string;
}

/** Every problem in the plan; empty means it may run. */
export function lintRecipe(
  batch: Batch,
  size: { width: number; height: number },
): LintProblem[] {
  const problems: LintProblem[] = [];
  if (batch.steps.length === 0) {
    problems.push({ code: "invalid_request", message: "the recipe has no steps" });
  }
  if (batch.steps.length > MAX_STEPS) {
    problems.push({
      code: "invalid_request",
      message: `the recipe has ${batch.steps.length} steps; at most ${MAX_STEPS} are allowed`,
    });
  }
  if (batch.record && batch.artifact_dir === undefined) {
    problems.push({
      code: "invalid_request",
      message: "record: true needs artifact_dir, the workspace folder the MP4 is written to",
    });
  }
  batch.steps.forEach((step, index) => {
    for (const message of stepProblems(step, size)) {
      problems.push({ code: "out_of_range", message: `step ${index} (${step.op}): ${message}` });
    }
    if (step.op === "wait" && step.ms > MAX_WAIT_MS) {
      problems.push({
        code: "invalid_request",
        message: `step ${index} (wait): ${step.ms} ms is over the ${MAX_WAIT_MS} ms limit`,
      });
    }
    if (step.op === "key") {
      try {
        parseChord(step.key);
      } catch (error) {
        problems.push({
          code: "invalid_request",
          message: `step ${index} (key): ${(error as Error).message}`,
        });
      }
    }
  });
  return problems;
}

/** The out-of-range messages for one step's coordinates. */
export function stepProblems(step: Step, size: { width: number; height: number }): string[] {
  const points: [string, number | undefined, number | undefined][] = [];
  switch (step.op) {
    case "drag":
      points.push(["x1/y1", step.x1, step.y1], ["x2/y2", step.x2, step.y2]);
      step.path?.forEach((p, i) => points.push([`path[${i}]`, p.x, p.y]));
      break;
    case "mouse_up":
    case "mouseup":
      points.push(["x/y", step.x, step.y]);
      step.path?.forEach((p, i) => points.push([`path[${i}]`, p.x, p.y]));
      break;
    case "click":
    case "double_click":
    case "mouse_down":
    case "mousedown":
    case "move":
    case "scroll":
      points.push(["x/y", step.x, step.y]);
      break;
  }
  const problems: string[] = [];
  for (const [name, x, y] of points) {
    if (x === undefined || y === undefined) continue;
    if (x < 0 || y < 0 || x >= size.width || y >= size.height) {
      problems.push(
        `${name} (${x}, ${y}) is outside the ${size.width}x${size.height} framebuffer ` +
          `(x 0-${size.width - 1}, y 0-${size.height - 1})`,
      );
    }
  }
  return problems;
}
