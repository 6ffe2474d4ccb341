/**
 * `gurt loop` through the owner's providers under a path, in processes: the real `gurt serve`, the
 * real loop worker, a scripted model service at `<fake>/api/v1` (Chat Completions, as OpenRouter's
 * base) or `<fake>/gateway` (an Anthropic-shaped gateway), reached through the task's model
 * endpoint with the provider's vault key, in the API its provider speaks.
 */
import { assert, assertEquals } from "../assert.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { gurt, makeHome, startServe, taskEnded } from "../kit/mod.ts";
import { type SeenRequest, startFakeModel } from "./fake_model.ts";

const ROUTER_KEY = "sk-or-v1-loop-provider-key-5e6f";
const GATEWAY_KEY = "gw-loop-provider-key-7a8b";

/** Runs one loop task with `model` on a box with both providers; the request the fake saw. */
async function loopThrough(model: string): Promise<SeenRequest> {
  const fake = startFakeModel([{ text: "Hello from the provider." }]);
  const home = await makeHome({
    prefix: "gurt-provider-loop-",
    dirs: ["grants"],
    files: {
      "gurt.toml": `[models]
model = "${model}"

[models.providers.openrouter]
base_url = "${fake.url}/api/v1"
api = "openai-chat"
key = "OPENROUTER_API_KEY"

[models.providers.gateway]
base_url = "${fake.url}/gateway"
api = "anthropic"
key = "GATEWAY_KEY"
`,
      "vault.env": {
        text: `OPENROUTER_API_KEY=${ROUTER_KEY}\nGATEWAY_KEY=${GATEWAY_KEY}\n`,
        mode: 0o600,
      },
    },
  });
  await Deno.chmod(home, 0o711);
  const served = await startServe(home, { env: { BOX_VAULT: `${home}/vault.env` } });
  try {
    assertEquals(served.exited, null, served.stderr());
    const args = ["--home", home, "task", "start", "--worker", "loop", "--tools", "read_file"];
    const started = await gurt([...args, "say hello"]);
    assertEquals(started.code, 0, started.stderr + served.stderr());
    const id = started.stdout.trim();
    const end = await taskEnded(adminSocketPath(home), id, 60_000);
    assertEquals(end.state, "done", served.stderr());
    assertEquals(fake.requests.length, 1);
    // The keys never reached the task: not in its journal nor its worker's log.
    for (const file of ["journal.jsonl", "worker.log"]) {
      const text = await Deno.readTextFile(`${home}/tasks/${id}/${file}`).catch(() => "");
      assert(!text.includes(ROUTER_KEY) && !text.includes(GATEWAY_KEY), file);
    }
    return fake.requests[0];
  } finally {
    await served.stop();
    await fake.close();
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("gurt loop with the model openrouter/<model> speaks Chat Completions to the provider's /api/v1 with its key as a Bearer token, and ends done", async () => {
  const request = await loopThrough("openrouter/qwen/qwen3-coder");
  assertEquals(request.path, "/api/v1/chat/completions");
  assertEquals(request.headers.authorization, `Bearer ${ROUTER_KEY}`);
  assertEquals(request.body.model, "qwen/qwen3-coder");
});

Deno.test("gurt loop with a model an Anthropic-shaped gateway serves speaks Messages to its /gateway/v1/messages with its key in x-api-key", async () => {
  const request = await loopThrough("gateway/sonnet");
  assertEquals(request.path, "/gateway/v1/messages");
  assertEquals(request.headers["x-api-key"], GATEWAY_KEY);
  assertEquals(request.headers.authorization, undefined);
  assertEquals(request.body.model, "sonnet");
});
