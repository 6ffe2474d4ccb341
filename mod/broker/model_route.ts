/**
 * GET /model on the task socket: the model a task's loop asks for, and the loop's limits. The loop
 * sends its model requests to its task's model endpoint (mod/model-proxy), which holds the key; the
 * task socket carries none.
 */
import type { Hono } from "hono";
import type { BrokerDeps, TaskContext } from "./deps.ts";
import type { WorkerSpec } from "./task_store.ts";

/** The model a loop task uses: its own (`--model`), else gurt.toml's `[models] model`. */
export function loopModel(
  worker: WorkerSpec,
  config: Pick<BrokerDeps["config"], "models">,
): string {
  return worker.kind === "loop" && worker.model !== null ? worker.model : config.models.model;
}

/** Adds GET /model to a task's app: `{model, maxTokens, maxTurns}`. */
export function addModelRoute(app: Hono, ctx: TaskContext<Pick<BrokerDeps, "config">>): void {
  const { deps, task } = ctx;
  app.get("/model", (c) =>
    c.json({
      model: loopModel(task.record.worker, deps.config),
      maxTokens: deps.config.models.max_tokens,
      maxTurns: deps.config.models.max_turns,
    }));
}
