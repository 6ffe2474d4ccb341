/**
 * `gurt loop` through one of the owner's providers under a path, in processes: the real `gurt
 * serve`, the real loop worker, a scripted Chat Completions service at `<fake>/api/v1` (as
 * OpenRouter's base), reached through the task's model endpoint with the provider's vault key.
 */
import { assert, assertEquals } from "../assert.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { gurt, makeHome, startServe, taskEnded } from "../kit/mod.ts";
import { startFakeModel } from "./fake_model.ts";

const ROUTER_KEY = "sk-or-v1-loop-provider-key-5e6f";

Deno.test("gurt loop with --model openrouter/<model> speaks Chat Completions to the provider's /api/v1 with its key, and ends done", async () => {
  const model = startFakeModel([{ text: "Hello from the provider." }]);
  const home = await makeHome({
    prefix: "gurt-provider-loop-",
    dirs: ["grants"],
    files: {
      "gurt.toml": `[models.providers.openrouter]
base_url = "${model.url}/api/v1"
api = "openai-chat"
key = "OPENROUTER_API_KEY"
`,
      "vault.env": { text: `OPENROUTER_API_KEY=${ROUTER_KEY}\n`, mode: 0o600 },
    },
  });
  await Deno.chmod(home, 0o711);
  const served = await startServe(home, { env: { BOX_VAULT: `${home}/vault.env` } });
  try {
    assertEquals(served.exited, null, served.stderr());
    const started = await gurt([
      "--home",
      home,
      "task",
      "start",
      "--worker",
      "loop",
      "--model",
      "openrouter/qwen/qwen3-coder",
      "--tools",
      "read_file",
      "say hello",
    ]);
    assertEquals(started.code, 0, started.stderr + served.stderr());
    const id = started.stdout.trim();
    const end = await taskEnded(adminSocketPath(home), id, 60_000);
    assertEquals(end.state, "done", served.stderr());
    assertEquals(model.requests.length, 1);
    const [request] = model.requests;
    assertEquals(request.path, "/api/v1/chat/completions");
    assertEquals(request.headers.authorization, `Bearer ${ROUTER_KEY}`);
    assertEquals(request.body.model, "qwen/qwen3-coder");
    assert(!request.raw.includes(ROUTER_KEY));
    // The key never reached the task: not in its journal nor its worker's log.
    for (const file of ["journal.jsonl", "worker.log"]) {
      const text = await Deno.readTextFile(`${home}/tasks/${id}/${file}`).catch(() => "");
      assert(!text.includes(ROUTER_KEY), file);
    }
  } finally {
    await served.stop();
    await model.close();
    await Deno.remove(home, { recursive: true });
  }
});
