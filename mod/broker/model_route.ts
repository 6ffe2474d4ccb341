/**
 * GET /model on the task socket: the model a task's loop asks for, and the loop's limits. The loop
 * sends its model requests to its task's model endpoint (mod/model-proxy), which holds the key; the
 * task socket carries none.
 */
import type { Hono } from "hono";
import type { BrokerDeps, TaskContext } from "./deps.ts";
import type { WorkerSpec } from "./task_store.ts";
import { type ProviderApi, providerOf } from "../model-proxy/mod.ts";

/** The model a loop task uses: its own (`--model`), else gurt.toml's `[models] model`. */
export function loopModel(
  worker: WorkerSpec,
  config: Pick<BrokerDeps["config"], "models">,
): string {
  return worker.kind === "loop" && worker.model !== null ? worker.model : config.models.model;
}

/**
 * The API of the owner's provider that serves the task's model (its own, else the box's), paired
 * with that model, for a worker that speaks the API its model's provider does; null for a model
 * of the built-in services. Names no URL and no key.
 */
export function taskModelApi(
  worker: WorkerSpec,
  config: Pick<BrokerDeps["config"], "models">,
): { model: string; api: ProviderApi } | null {
  const own = worker.kind === "loop" || worker.kind === "agent" ? worker.model : null;
  const model = own ?? config.models.model;
  const providers = Object.entries(config.models.providers).map(([name, provider]) => ({
    name,
    api: provider.api,
    models: provider.models,
  }));
  const found = providerOf(model, providers);
  return found === null ? null : { model, api: found.provider.api };
}

/** Adds GET /model to a task's app: `{model, maxTokens, maxTurns, provider}`. */
export function addModelRoute(app: Hono, ctx: TaskContext<Pick<BrokerDeps, "config">>): void {
  const { deps, task } = ctx;
  app.get("/model", (c) =>
    c.json({
      model: loopModel(task.record.worker, deps.config),
      maxTokens: deps.config.models.max_tokens,
      maxTurns: deps.config.models.max_turns,
      provider: taskModelApi(task.record.worker, deps.config),
    }));
}
