/**
 * A new task's beginnings: its folder, script, task.json and task_started record, and the missing
 * model key that ends a loop or agent task before its worker starts (task_manager.ts runs both).
 */
import { type BrokerDeps, loopModel, type TaskRecord, writeTask } from "../broker/mod.ts";
import type { StartTask } from "../admin/mod.ts";
import { KEY_NAMES, noKeyMessage, providerOf } from "../model-proxy/mod.ts";
import { modelService } from "../loop/mod.ts";
import { agentService } from "../agents/mod.ts";

/** Makes a new task's folder, script and task.json, and writes its task_started record. */
export async function createTask(
  deps: BrokerDeps,
  spec: StartTask,
  made: { id: string; dir: string },
): Promise<TaskRecord> {
  const { id, dir } = made;
  await Deno.mkdir(`${dir}/home`, { recursive: true, mode: 0o700 });
  await Deno.chmod(dir, 0o700);
  let worker: TaskRecord["worker"];
  if (spec.worker.kind === "test") {
    // The script lives in the task's folder, where its user can read it and a restart finds it.
    const script = deps.redact(spec.worker.scriptText); // no vault value in a task's files
    await Deno.writeTextFile(`${dir}/script.txt`, script, { mode: 0o644 });
    worker = { kind: "test", script: `${dir}/script.txt` };
  } else {
    worker = spec.worker;
  }
  const record: TaskRecord = {
    id,
    prompt: deps.redact(spec.prompt),
    worker,
    tools: spec.tools,
    budgetCents: spec.budgetCents,
    state: "running",
    created: deps.clock().toISOString(),
    ended: null,
    endReason: null,
    user: null,
    pid: null,
    hosts: spec.hosts,
  };
  await writeTask(deps.home, record);
  await deps.audit.append({
    type: "task_started",
    task: id,
    worker: worker.kind,
    tools: spec.tools,
    budget_cents: spec.budgetCents,
  });
  return record;
}

/**
 * The model endpoint's sentence for a loop task whose model's service has no key in the vault,
 * else null: such a task fails at once rather than start a worker whose every request would fail.
 */
export function missingModelKey(deps: BrokerDeps, record: TaskRecord): string | null {
  const worker = record.worker;
  const has = (service: keyof typeof KEY_NAMES) =>
    deps.vault.value(KEY_NAMES[service]) !== undefined;
  // A model one of the owner's providers serves needs that provider's key instead.
  const model = worker.kind === "agent"
    ? worker.model
    : worker.kind === "loop"
    ? loopModel(worker, deps.config)
    : null;
  const providers = Object.entries(deps.config.models.providers).map(([name, provider]) => ({
    name,
    ...provider,
  }));
  const provided = model === null || model === undefined ? null : providerOf(model, providers);
  if (provided !== null) {
    const { name, key } = provided.provider;
    return deps.vault.value(key) !== undefined
      ? null
      : `The model ${model} is served by provider ${name}, whose key ${key} the box's vault does not hold (gurt vault set ${key}); see runbook.md#provider-key-missing`;
  }
  if (worker.kind === "agent") {
    // Droid works with Factory's key or its own (bring-your-own-key) model's service's.
    if (worker.agent === "droid" && has("factory")) return null;
    const service = agentService(worker.agent, worker.model);
    return has(service) ? null : noKeyMessage(service);
  }
  const service = modelService(loopModel(worker, deps.config));
  return has(service) ? null : noKeyMessage(service);
}
