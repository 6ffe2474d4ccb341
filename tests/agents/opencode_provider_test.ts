/**
 * OpenCode through OpenRouter's shape ([models.providers.openrouter], api "openai-chat", at
 * `<fake>/api/v1`): the real agent in its task's sandbox, the scripted fake Chat Completions
 * service, the vault's OPENROUTER_API_KEY (and no OPENAI_API_KEY at all) put on each request by
 * the task's model endpoint as a Bearer token, the model sent without the provider's name.
 */
import { assert, assertEquals } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import { agentSkip, withAgentBox } from "./agent_box.ts";
import { startFakeChat } from "../../mod/stand-in/chat.ts";

const skip = agentSkip("opencode");
if (skip !== null) console.log(`skipping the OpenCode provider test: ${skip}`);

Deno.test({
  name:
    "OpenCode with --model openrouter/<vendor>/<model> speaks Chat Completions to the provider's /api/v1 with its key as a Bearer token, and ends done",
  ignore: skip !== null,
  fn: async () => {
    const fake = startFakeChat({ agent: "opencode" });
    const key = `sk-or-v1-canary-${crypto.randomUUID().slice(0, 12)}`;
    try {
      await withAgentBox({
        agent: "opencode",
        grants: { echo: grant({ tool: "example.echo" }) },
        vault: { OPENROUTER_API_KEY: key },
        toml: `[models.providers.openrouter]
base_url = "${fake.url}/api/v1"
api = "openai-chat"
key = "OPENROUTER_API_KEY"
headers = { "X-Title" = "gurt" }
`,
      }, async (opencode) => {
        const id = await opencode.start("Say hi through the box.", {
          model: "openrouter/anthropic/claude-sonnet-4.5",
        });
        const { task, log } = await opencode.end(id);
        assertEquals(task.state, "done", log);
        const posts = fake.requests.filter((request) => request.method === "POST");
        assert(posts.length >= 1, JSON.stringify(fake.requests.map((r) => r.path)));
        for (const request of posts) {
          assertEquals(request.path, "/api/v1/chat/completions");
          assertEquals(request.headers.authorization, `Bearer ${key}`);
          assertEquals(request.headers["x-title"], "gurt");
          assertEquals(JSON.parse(request.body).model, "anthropic/claude-sonnet-4.5");
        }
        assert(!log.includes(key), "the key is in the worker's log");
      });
    } finally {
      await fake.close();
    }
  },
});
