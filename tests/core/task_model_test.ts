/**
 * A task's model endpoint (issue 19), wired into a real task as root: the worker's ANTHROPIC_BASE_URL
 * and placeholder key reach a scripted Anthropic service on the host with the vault's key, which
 * never enters the task; the answer's usage is charged to the task; a request that would make the
 * service fetch something is refused with a net_blocked record.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Json, startBox, startScriptTask, taskEnd } from "../kit/mod.ts";

// Made at run time, so that no file the task can see (gurt's code is mounted in it) holds it.
const KEY = `sk-ant-canary-${crypto.randomUUID().slice(0, 12)}`;

Deno.test({
  name:
    "a task's Anthropic requests reach the service with the vault's key, which the task never holds; usage is charged",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const seen: { key: string | null; beta: string | null; body: Json }[] = [];
    const service = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (request) => {
        const body = await request.json();
        seen.push({
          key: request.headers.get("x-api-key"),
          beta: request.headers.get("anthropic-beta"),
          body,
        });
        return Response.json({
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: body.model,
          content: [{ type: "text", text: "hello from the service" }],
          stop_reason: "end_turn",
          usage: { input_tokens: 1_000_000, output_tokens: 0 },
        });
      },
    );
    const vault: Record<string, string> = { ANTHROPIC_API_KEY: KEY };
    const box = await startBox({
      core: { asRoot: true, vault: { value: (n) => vault[n], names: () => Object.keys(vault) } },
      toml: `[models]\nanthropic_base_url = "http://127.0.0.1:${service.addr.port}"\n`,
    });
    try {
      const message = JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      });
      const fetching = JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 10,
        messages: [{
          role: "user",
          content: [{ type: "image", source: { type: "url", url: "http://10.0.0.1/x.png" } }],
        }],
      });
      const post = (body: string) =>
        `curl -s "$ANTHROPIC_BASE_URL/v1/messages" -H "x-api-key: $ANTHROPIC_API_KEY" \\
           -H 'anthropic-version: 2023-06-01' -H 'anthropic-beta: tools-2024-05-16' \\
           -H 'content-type: application/json' -d '${body}'`;
      const { id } = await startScriptTask(
        box,
        `echo "answer: $(${post(message)})"
         echo "refused: $(${post(fetching)})"
         cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ${KEY} || true
         grep -rl ${KEY} "$HOME" /tmp 2>/dev/null | wc -l`,
      );
      const { task, log } = await taskEnd(box, id, 60_000);
      assertEquals(task.state, "done", log);
      assertStringIncludes(log, "hello from the service");
      assertStringIncludes(log, 'refused: {"type":"error"');
      assert(!log.includes(KEY), "the key reached the task's log");
      const [environs, files] = log.trim().split("\n").slice(-2);
      assertEquals([environs, files], ["0", "0"], "the key in the task's environment or files");
      // One request reached the service, with the real key, the agent's model and its beta header.
      assertEquals(seen.length, 1);
      assertEquals(seen[0].key, KEY);
      assertEquals(seen[0].beta, "tools-2024-05-16");
      assertEquals(seen[0].body.model, "claude-sonnet-4-5");
      // A million input tokens at the model's list rate: a cost the task shows.
      assert(task.spentCents > 0, JSON.stringify(task));
      const events = (await box.records()).map((r) => r.event);
      // Named by the hold its journal wrote before the request left (docs/audit.md).
      assert(
        events.some((e) =>
          e.type === "cost" && e.task === id && /^model hold [0-9a-f]{16}$/.test(e.what)
        ),
      );
      const blocked = events.filter((e) => e.type === "net_blocked");
      assertEquals(blocked.length, 1, JSON.stringify(blocked));
      assertEquals(blocked[0].host, "127.0.0.1");
    } finally {
      await box.close();
      await service.shutdown();
    }
  },
});
