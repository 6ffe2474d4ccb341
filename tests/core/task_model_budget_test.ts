/**
 * A task over its budget has its next model request held for the owner (issue 19, docs/grants.md#budgets),
 * end to end as root: a cmd task with a budget of 1 cent curls its model endpoint; the first answer
 * costs far more than that; the second request waits in `gurt approvals` as a budget approval, and
 * `gurt approve N` lets it through to the service; the answer's charge brings the third back to the
 * owner, and `gurt refuse N --reason …` answers it 403 in Anthropic's format with the reason.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, type Json, startBox, taskEnd, until } from "../kit/mod.ts";

const KEY = `sk-ant-canary-${crypto.randomUUID().slice(0, 12)}`;

Deno.test({
  name:
    "a task past its budget: its next model request waits in gurt approvals; approve sends it, refuse answers 403 with the reason",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const seen: Json[] = [];
    const service = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (request) => {
        const body = await request.json();
        seen.push(body);
        return Response.json({
          id: `msg_${seen.length}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [{ type: "text", text: `answer ${seen.length}` }],
          stop_reason: "end_turn",
          // A million input tokens of claude-sonnet-4-5: 300 cents, far past the budget.
          usage: { input_tokens: 1_000_000, output_tokens: 0 },
        });
      },
    );
    const vault: Record<string, string> = { ANTHROPIC_API_KEY: KEY };
    const box = await startBox({
      core: { asRoot: true, vault: { value: (n) => vault[n], names: () => Object.keys(vault) } },
      toml: `[models]\nanthropic_base_url = "http://127.0.0.1:${service.addr.port}"\n`,
    });
    const cli = (args: string[]) => gurt(["--home", box.home, ...args]);
    try {
      const body = JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      });
      const post = `curl -s -w ' %{http_code}' "$ANTHROPIC_BASE_URL/v1/messages" \\
        -H "x-api-key: $ANTHROPIC_API_KEY" -H 'anthropic-version: 2023-06-01' \\
        -H 'content-type: application/json' -d '${body}'`;
      const started = await box.admin("POST", "/tasks", {
        worker: {
          kind: "cmd",
          command: [
            "/bin/sh",
            "-c",
            `echo "first: $(${post})"; echo "second: $(${post})"; echo "third: $(${post})"`,
          ],
        },
        tools: ["example.echo"],
        budgetCents: 1,
        hosts: [],
      });
      assertEquals(started.status, 200, JSON.stringify(started.body));
      const id = started.body.task.id as string;

      // The first answer is charged; the second request waits for the owner.
      const pendingBlock = async (): Promise<{ approval: number; text: string } | null> => {
        const shown = await cli(["approvals"]);
        const match = shown.stdout.match(/^(\d+) .*over budget.*\n\s+box\.model (.*)$/m);
        return match === null ? null : { approval: Number(match[1]), text: match[2] };
      };
      let held: { approval: number; text: string } | null = null;
      await until(async () => (held = await pendingBlock()) !== null, 60_000);
      const first = held!;
      assertEquals(seen.length, 1);
      assertStringIncludes(first.text, '"service":"anthropic"');
      assertStringIncludes(first.text, "model spend, $3.00, is at or past its budget of $0.01");
      const approved = await cli(["approve", String(first.approval)]);
      assertEquals(approved.stdout.trim(), `approved ${first.approval}: runs`, approved.stderr);

      // Approved: the second reaches the service; its charge brings the third back to the owner.
      held = null;
      await until(
        async () => (held = await pendingBlock()) !== null && held.approval !== first.approval,
        60_000,
      );
      assertEquals(seen.length, 2);
      assertStringIncludes(held!.text, "model spend, $6.00");
      const refused = await cli(["refuse", String(held!.approval), "--reason", "that is enough"]);
      assertEquals(refused.stdout.trim(), `refused ${held!.approval}`, refused.stderr);

      const { task, log } = await taskEnd(box, id, 60_000);
      assertEquals(task.state, "done", log);
      assertEquals(task.spentCents, 600);
      assertStringIncludes(log, "first: ");
      assertStringIncludes(log, "answer 1");
      assert(/second: .*answer 2.* 200/.test(log), log);
      const third = log.split("\n").find((line) => line.startsWith("third: "))!;
      assert(third.endsWith(" 403"), log);
      const error = JSON.parse(third.slice("third: ".length, -" 403".length));
      assertEquals(error.type, "error");
      assertEquals(error.error.type, "permission_error");
      assertStringIncludes(error.error.message, "that is enough");
      assertStringIncludes(error.error.message, "see runbook.md#model-budget");
      assertEquals(seen.length, 2, "the refused request reached the service");
      assert(!log.includes(KEY), "the key reached the task's log");

      // Audited as a tool call's budget ask: a Decision (ask), then the owner's Approval record.
      const records = (await box.records()).map((r) => ({ seq: r.seq, ...r.event }));
      const asks = records.filter((r) => r.type === "decision" && r.tool === "box.model");
      assertEquals(asks.map((r) => r.seq), [first.approval, held!.approval]);
      const answers = records.filter((r) =>
        r.type === "approval" && asks.some((a) => a.seq === r.decision)
      ).map((r) => [r.decision, r.answer, r.reason]);
      assertEquals(answers, [
        [first.approval, "approved", null],
        [held!.approval, "refused", "that is enough"],
      ]);
    } finally {
      await box.close();
      await service.shutdown();
    }
  },
});
