/**
 * A real core in-process on a temporary home (startBox) whose tasks run the real `gurt loop`
 * worker, with `[models]` sending both services' requests to the test's model service and a vault
 * view set by the test.
 */
import { adminSocketPath } from "../../mod/config/mod.ts";
import type { AppTool } from "../../mod/tools/mod.ts";
import { type Json, startBox, taskEnded, type TestBox } from "../kit/mod.ts";

/** A box whose tasks run `gurt loop`. */
export interface LoopBox extends TestBox {
  /** Starts a loop task and returns its id (or the failed task's record, when it failed). */
  startLoop(prompt: string, tools: string[], model?: string): Promise<Json>;
  /** Waits until task `id` has ended, and returns its record. */
  ended(id: string, ms?: number): Promise<Json>;
}

/** Starts a box whose model endpoints relay to `modelUrl`; `model` is `[models] model`. */
export async function startLoopBox(options: {
  modelUrl: string;
  model?: string;
  vault?: Record<string, string>;
  grants?: Record<string, string>;
  tools?: AppTool<never>[];
  env?: Record<string, string>;
}): Promise<LoopBox> {
  const vault = options.vault ?? {};
  const model = options.model === undefined ? "" : `model = "${options.model}"\n`;
  const box = await startBox({
    prefix: "gurt-loop-",
    grants: options.grants,
    toml: `[models]\n${model}anthropic_base_url = "${options.modelUrl}"\n` +
      `openai_base_url = "${options.modelUrl}"\n`,
    tools: options.tools,
    env: options.env,
    core: { vault: { value: (name) => vault[name], names: () => Object.keys(vault) } },
  });
  return Object.assign(box, {
    async startLoop(prompt: string, tools: string[], model?: string) {
      const answer = await box.admin("POST", "/tasks", {
        prompt,
        worker: { kind: "loop", model: model ?? null },
        tools,
      });
      if (answer.status !== 200) {
        throw new Error(`task start failed: ${JSON.stringify(answer.body)}`);
      }
      return answer.body.task;
    },
    async ended(id: string, ms = 30_000) {
      await taskEnded(adminSocketPath(box.home), id, ms).catch((error) => {
        throw new Error(`${error.message}; logs: ${box.logs.join("\n")}`);
      });
      return (await box.admin("GET", `/tasks/${id}`)).body.task;
    },
  });
}
