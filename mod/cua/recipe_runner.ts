/**
 * Runs a linted recipe in order on the one pointer and writes its receipt: per-step outcome and
 * time, the observation the caller asked for, screenshots, and the recording's artifact.
 */
import { Buffer } from "node:buffer";
import { GuestError, Jail, type Resolved } from "../exec-guest/mod.ts";
import { invalidRequest, pathEscape, recordingFailed } from "./cua_errors.ts";
import type { Cua } from "./cua_service.ts";
import type { DevTools } from "./devtools.ts";
import { lintRecipe } from "./recipe_lint.ts";
import { Recording } from "./recorder.ts";
import type { Batch, Observation, PictureInfo, Receipt, Step, StepReceipt } from "./schemas.ts";
import { pause } from "./x11_input.ts";

const SETTLE_RAW_MS = 500;
const SETTLE_CAP_MS = 1000;
const SETTLE_POLL_MS = 50;

/** What a recipe run needs besides the plan. */
export interface RecipeContext {
  cua: Cua;
  devtools: DevTools;
  workspace: string;
}

const POINTER_OPS = new Set(["click", "double_click", "mouse_down", "mousedown", "move", "scroll"]);
const URL_OPS = new Set(["click", "double_click", "type", "key"]);
const INPUT_OPS = new Set([
  "click",
  "double_click",
  "mouse_down",
  "mousedown",
  "mouse_up",
  "mouseup",
  "move",
  "drag",
  "type",
  "key",
  "scroll",
]);

/** Lints the plan (400 and nothing moves if bad), then runs it; returns the receipt. */
export async function runRecipe(batch: Batch, context: RecipeContext): Promise<Receipt> {
  const problems = lintRecipe(batch, context.cua.size);
  if (problems.length > 0) {
    const code = problems[0].code;
    const message = `the recipe was not run, nothing moved: ${
      problems.map((p) => p.message).join("; ")
    }`;
    throw new GuestError(code, 400, message);
  }
  const artifactDir = batch.artifact_dir === undefined
    ? undefined
    : await resolveArtifactDir(context.workspace, batch.artifact_dir);
  return await context.cua.exclusive(() => run(batch, context, artifactDir));
}

async function run(
  batch: Batch,
  context: RecipeContext,
  artifactDir: string | undefined,
): Promise<Receipt> {
  const { cua } = context;
  const started = performance.now();
  const artifacts: Receipt["artifacts"] = [];
  // Fail before the first step (503) if the display is gone.
  await cua.requireDisplay();
  if (batch.record && artifactDir !== undefined) {
    // ffmpeg follows whatever already sits at its output paths: start from nothing there.
    await clearPath(`${artifactDir}/.recording-tape.mp4`);
    await clearPath(`${artifactDir}/recording.mp4`);
  }
  const recording = batch.record && artifactDir !== undefined
    ? await Recording.start(cua.display, {
      ...cua.size,
      tape: `${artifactDir}/.recording-tape.mp4`,
    })
      .catch((error) => {
        throw recordingFailed((error as Error).message);
      })
    : undefined;
  const steps: StepReceipt[] = [];
  let stoppedAt: number | null = null;
  try {
    for (let index = 0; index < batch.steps.length; index++) {
      const step = batch.steps[index];
      const receipt = await runStep(step, index, batch, context);
      if (batch.screenshot === "each" || step.op === "screenshot") {
        // A screenshot that fails is that step's failure, not the whole recipe's.
        try {
          const name = `step-${pad(index)}.png`;
          receipt.screenshot = await picture(cua, artifactDir, name, artifacts);
        } catch (caught) {
          if (receipt.ok) {
            receipt.ok = false;
            receipt.error = errorOf(caught);
          }
        }
      }
      steps.push(receipt);
      if (!receipt.ok && batch.stop_on_error) {
        stoppedAt = index;
        break;
      }
    }
  } finally {
    if (recording && artifactDir !== undefined) {
      const output = `${artifactDir}/recording.mp4`;
      await recording.finish(output).catch((error) => {
        throw recordingFailed((error as Error).message);
      });
      artifacts.push({
        kind: "video",
        path: output,
        mime: "video/mp4",
        bytes: (await Deno.stat(output)).size,
      });
    }
  }
  const receipt: Receipt = {
    ok: steps.every((s) => s.ok),
    ran: steps.length,
    stopped_at: stoppedAt,
    duration_ms: 0,
    steps,
    artifacts,
  };
  if (batch.screenshot === "end") {
    // Absent, like an observation, when the display gave no picture: the steps still ran.
    const end = await picture(cua, artifactDir, "end.png", artifacts).catch(() => undefined);
    if (end) receipt.screenshot = end;
  }
  receipt.duration_ms = Math.round(performance.now() - started);
  if (batch.observe !== "off") receipt.observe = batch.observe;
  return receipt;
}

async function runStep(
  step: Step,
  index: number,
  batch: Batch,
  context: RecipeContext,
): Promise<StepReceipt> {
  const { cua, devtools } = context;
  const observing = batch.observe !== "off" && looksAt(step);
  const observed: Observation = { observe_ms: 0 };
  if (observing) {
    const t = performance.now();
    const target = targetOf(step);
    if (target) setIf(observed, "target", await cua.windowAt(target.x, target.y));
    if (step.op === "type" || step.op === "key") setIf(observed, "focus", await cua.focus());
    if (batch.observe === "page" && URL_OPS.has(step.op)) {
      setIf(observed, "url_before", await devtools.activeUrl());
    }
    observed.observe_ms += performance.now() - t;
  }
  const t0 = performance.now();
  let error: { code: string; message: string } | undefined;
  try {
    if (step.op === "reset_desktop") {
      await cua.resetDesktop({ relaunchChrome: batch.settle !== "off" });
    } else if (step.op !== "screenshot") {
      await cua.perform(step);
      if (INPUT_OPS.has(step.op)) await settle(batch.settle, devtools);
    }
  } catch (caught) {
    error = errorOf(caught);
  }
  const ms = Math.round(performance.now() - t0);
  if (observing && batch.observe === "page" && URL_OPS.has(step.op)) {
    const t = performance.now();
    setIf(observed, "url_after", await devtools.activeUrl());
    observed.observe_ms += performance.now() - t;
  }
  const receipt: StepReceipt = { index, op: step.op, ok: error === undefined, ms };
  if (error) receipt.error = error;
  if (observing) {
    // The seed's order: what was seen, then what looking cost.
    const { observe_ms, ...seen } = observed;
    receipt.observed = { ...seen, observe_ms: Math.round(observe_ms) };
  }
  return receipt;
}

/** Whether the step has anything to look at: a pointer target, or a focus for keys. */
function looksAt(step: Step): boolean {
  return targetOf(step) !== undefined || step.op === "type" || step.op === "key";
}

function targetOf(step: Step): { x: number; y: number } | undefined {
  if (POINTER_OPS.has(step.op) && "x" in step && step.x !== undefined && step.y !== undefined) {
    return { x: step.x, y: step.y };
  }
  if (step.op === "drag") return { x: step.x1, y: step.y1 };
  if ((step.op === "mouse_up" || step.op === "mouseup") && step.x !== undefined) {
    return { x: step.x, y: step.y! };
  }
  return undefined;
}

function setIf<K extends keyof Observation>(
  observed: Observation,
  key: K,
  value: Observation[K] | undefined,
): void {
  if (value !== undefined) observed[key] = value;
}

/** Waits for the page after an input step: off, compressed (URL stable), or raw (fixed). */
async function settle(mode: Batch["settle"], devtools: DevTools): Promise<void> {
  if (mode === "off") return;
  if (mode === "raw") return await pause(SETTLE_RAW_MS);
  const deadline = Date.now() + SETTLE_CAP_MS;
  let last = await devtools.activeUrl();
  while (Date.now() < deadline) {
    await pause(SETTLE_POLL_MS);
    const now = await devtools.activeUrl();
    if (now === last) return;
    last = now;
  }
}

async function picture(
  cua: Cua,
  artifactDir: string | undefined,
  name: string,
  artifacts: Receipt["artifacts"],
): Promise<PictureInfo> {
  const shot = await cua.screenshot();
  const info = { mime: "image/png" as const, width: shot.width, height: shot.height };
  if (artifactDir === undefined) {
    return {
      ...info,
      bytes: shot.png.length,
      png_base64: Buffer.from(shot.png).toString("base64"),
    };
  }
  const file = `${artifactDir}/${name}`;
  await writeFresh(file, shot.png);
  artifacts.push({ kind: "screenshot", path: file, mime: "image/png", bytes: shot.png.length });
  return { ...info, bytes: shot.png.length, path: file };
}

/**
 * Creates artifact_dir inside the workspace and returns its path, with no link in it; 400 if it
 * escapes. The exec guest's Jail resolves it, following links by hand; each missing folder is made
 * alone, in a parent the Jail has just resolved, and the whole path is resolved again after.
 */
export async function resolveArtifactDir(workspace: string, dir: string): Promise<string> {
  if (dir.split("/").includes("..")) throw pathEscape(dir);
  const jail = new Jail(await Deno.realPath(workspace));
  // An absolute path under the workspace as it was named, before its links were resolved.
  const input = dir.startsWith(`${workspace}/`) ? dir.slice(workspace.length + 1) : dir;
  const parts = input.split("/").filter((part) => part !== "" && part !== ".");
  const prefix = input.startsWith("/") ? "/" : "";
  for (let made = 0; made <= parts.length; made++) {
    let missing: string | null = null;
    for (let depth = 1; depth <= parts.length && missing === null; depth++) {
      const resolved = await resolveIn(jail, prefix + parts.slice(0, depth).join("/"), dir);
      if (!resolved.exists) missing = resolved.path;
    }
    if (missing === null) break;
    await Deno.mkdir(missing).catch((error) => {
      if (error instanceof Deno.errors.AlreadyExists) return; // made meanwhile: resolve again
      throw invalidRequest(
        `artifact_dir ${JSON.stringify(dir)} could not be created: ${(error as Error).message}`,
      );
    });
  }
  const resolved = await resolveIn(jail, input, dir);
  const info = resolved.exists ? await Deno.stat(resolved.path) : null;
  if (info === null || !info.isDirectory) {
    throw invalidRequest(`artifact_dir ${JSON.stringify(dir)} could not be created: not a folder`);
  }
  return resolved.path;
}

/** The Jail's resolution of `path`, with its refusals said as artifact_dir's. */
async function resolveIn(jail: Jail, path: string, dir: string): Promise<Resolved> {
  try {
    return await jail.resolve(path, { followFinal: true });
  } catch (error) {
    if (error instanceof GuestError && error.code === "path_escape") throw pathEscape(dir);
    if (error instanceof GuestError) {
      throw invalidRequest(
        `artifact_dir ${JSON.stringify(dir)} could not be created: ${error.message}`,
      );
    }
    throw error;
  }
}

/** Writes a new file: whatever sat at the path (a symlink out, say) is removed, not followed. */
async function writeFresh(file: string, bytes: Uint8Array): Promise<void> {
  await clearPath(file);
  await Deno.writeFile(file, bytes, { createNew: true });
}

async function clearPath(file: string): Promise<void> {
  await Deno.remove(file).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
}

function errorOf(caught: unknown): { code: string; message: string } {
  return caught instanceof GuestError
    ? { code: caught.code, message: caught.message }
    : { code: "internal", message: (caught as Error).message };
}

function pad(index: number): string {
  return String(index).padStart(3, "0");
}
