/**
 * Droid (bringing the box's key) through an Anthropic-shaped gateway under a path
 * ([models.providers.gateway], api "anthropic", at `<front>/gateway`): the real agent in its task's
 * sandbox, the scripted fake Droid service behind a front that serves it only under `/gateway`,
 * the vault's GATEWAY_KEY (and no ANTHROPIC_API_KEY or FACTORY_API_KEY) put on each request by the
 * task's model endpoint as x-api-key.
 */
import { assert, assertEquals } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import { agentSkip, withAgentBox } from "./agent_box.ts";
import { startFakeAnthropicDroid } from "./fake_anthropic_droid.ts";

const skip = agentSkip("droid");
if (skip !== null) console.log(`skipping the Droid provider test: ${skip}`);

Deno.test({
  name:
    "Droid with --model gateway/<model> reaches an Anthropic-shaped gateway's /gateway/v1/messages with the gateway's key, and ends done",
  ignore: skip !== null,
  fn: async () => {
    const fake = startFakeAnthropicDroid({ usage: { input_tokens: 1_000, output_tokens: 50 } });
    const seen: { path: string; key: string | null; model: unknown }[] = [];
    // The gateway: the fake's API under /gateway, and nothing outside it.
    const front = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        const url = new URL(req.url);
        const body = req.method === "POST" ? await req.text() : undefined;
        let model: unknown = null;
        try {
          model = body === undefined ? null : JSON.parse(body).model;
        } catch {
          // Not JSON: no model.
        }
        seen.push({ path: url.pathname, key: req.headers.get("x-api-key"), model });
        if (!url.pathname.startsWith("/gateway/")) return new Response("outside", { status: 404 });
        return await fetch(`${fake.url}${url.pathname.slice("/gateway".length)}${url.search}`, {
          method: req.method,
          headers: req.headers,
          body,
        });
      },
    );
    const key = `gw-canary-${crypto.randomUUID().slice(0, 12)}`;
    try {
      await withAgentBox({
        agent: "droid",
        grants: { echo: grant({ tool: "example.echo" }) },
        vault: { GATEWAY_KEY: key },
        toml: `[models.providers.gateway]
base_url = "http://127.0.0.1:${front.addr.port}/gateway"
api = "anthropic"
key = "GATEWAY_KEY"
models = ["claude-*"]
`,
      }, async (droid) => {
        const id = await droid.start("Say hi through the box.", {
          model: "gateway/claude-sonnet-4-5",
        });
        const { task, log } = await droid.end(id);
        assertEquals(task.state, "done", log);
        const posts = seen.filter((request) => request.path.endsWith("/v1/messages"));
        assert(posts.length >= 1, JSON.stringify(seen));
        for (const request of seen) {
          assert(request.path.startsWith("/gateway/v1/"), request.path);
          assertEquals(request.key, key);
        }
        assert(
          posts.some((request) => request.model === "claude-sonnet-4-5"),
          JSON.stringify(seen),
        );
        assert(!log.includes(key), "the key is in the worker's log");
      });
    } finally {
      await front.shutdown();
      await fake.close();
    }
  },
});
