/**
 * Claude Code through an Anthropic-shaped gateway under a path ([models.providers.gateway], api
 * "anthropic"): the real agent in its task's sandbox, the scripted fake Anthropic service serving
 * the API under `/gateway`, the vault's GATEWAY_KEY (and no ANTHROPIC_API_KEY at all) put on each
 * request by the task's model endpoint as x-api-key.
 */
import { assert, assertEquals } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import { withAgentBox } from "./agent_box.ts";
import { claudeSkip } from "./claude_box.ts";
import { startFakeAnthropic } from "../../mod/stand-in/anthropic.ts";

const skip = claudeSkip();
if (skip !== null) console.log(`skipping the Claude Code provider test: ${skip}`);

Deno.test({
  name:
    "Claude Code with --model gateway/<model> reaches an Anthropic-shaped gateway's /gateway/v1/messages with the gateway's key, and ends done",
  ignore: skip !== null,
  fn: async () => {
    const fake = startFakeAnthropic({ agent: "claude", basePath: "/gateway" });
    const key = `gw-canary-${crypto.randomUUID().slice(0, 12)}`;
    try {
      await withAgentBox({
        agent: "claude",
        grants: { echo: grant({ tool: "example.echo" }) },
        vault: { GATEWAY_KEY: key },
        toml: `[models.providers.gateway]
base_url = "${fake.url}/gateway"
api = "anthropic"
key = "GATEWAY_KEY"
models = ["claude-*"]
`,
      }, async (claude) => {
        const id = await claude.start("Say hi through the box.", {
          model: "gateway/claude-sonnet-4-5",
        });
        const { task, log } = await claude.end(id);
        assertEquals(task.state, "done", log);
        assert(fake.messages().length >= 1, JSON.stringify(fake.requests.map((r) => r.path)));
        assertEquals(fake.messages()[0].body.model, "claude-sonnet-4-5");
        for (const request of fake.requests) {
          assert(request.path.startsWith("/gateway/v1/"), request.path);
          assertEquals(request.headers["x-api-key"], key);
        }
        assert(!log.includes(key), "the key is in the worker's log");
      });
    } finally {
      await fake.close();
    }
  },
});
