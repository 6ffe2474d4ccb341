/**
 * Codex through a Responses-shaped provider under a path ([models.providers.groq], api
 * "openai-responses", at `<fake>/openai/v1`): the real agent in its task's sandbox, the scripted
 * fake Responses service, the vault's GROQ_API_KEY (and no OPENAI_API_KEY at all) put on each
 * request by the task's model endpoint as a Bearer token.
 */
import { assert, assertEquals } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import { withAgentBox } from "./agent_box.ts";
import { codexSkip } from "./codex_box.ts";
import { startFakeResponses } from "../../mod/stand-in/responses.ts";

const skip = codexSkip();
if (skip !== null) console.log(`skipping the Codex provider test: ${skip}`);

Deno.test({
  name:
    "Codex with --model groq/<model> reaches a Responses provider's /openai/v1/responses with the provider's key as a Bearer token, and ends done",
  ignore: skip !== null,
  fn: async () => {
    const fake = startFakeResponses({ agent: "codex" });
    const key = `gsk-canary-${crypto.randomUUID().slice(0, 12)}`;
    try {
      await withAgentBox({
        agent: "codex",
        grants: { echo: grant({ tool: "example.echo" }) },
        vault: { GROQ_API_KEY: key },
        toml: `[models.providers.groq]
base_url = "${fake.url}/openai/v1"
api = "openai-responses"
key = "GROQ_API_KEY"
`,
        endMs: 60_000,
      }, async (codex) => {
        const id = await codex.start("Say hi through the box.", {
          model: "groq/openai/gpt-oss-120b",
        });
        const { task, log } = await codex.end(id);
        assertEquals(task.state, "done", log);
        const posts = fake.requests.filter((request) => request.method === "POST");
        assert(posts.length >= 1, JSON.stringify(fake.requests.map((r) => r.path)));
        for (const request of posts) {
          assertEquals(request.path, "/openai/v1/responses");
          assertEquals(request.headers.authorization, `Bearer ${key}`);
          assertEquals(JSON.parse(request.body).model, "openai/gpt-oss-120b");
        }
        assert(!log.includes(key), "the key is in the worker's log");
      });
    } finally {
      await fake.close();
    }
  },
});
