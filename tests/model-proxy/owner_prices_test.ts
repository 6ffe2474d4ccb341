/**
 * The owner's prices ([models.prices."<model>"]) and the exact spend through a real core: a model
 * priced 0 costs nothing and is never held for a budget, the owner's rate wins over the shipped
 * table's, a model with no price is charged at the highest listed rate and says so, and the exact
 * spend (the part of a cent not yet charged included) survives a restart and counts toward the
 * budget. The answers come from a scripted fake at base URLs with paths.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, pendingApproval, until } from "../kit/mod.ts";
import { journalWords } from "../../mod/owner-text/mod.ts";
import { whole } from "./fake_services.ts";
import { chat, chatUsage, chatWhole, journalOf, send, withSpend } from "./spend_kit.ts";

const FREE = `[models.prices."qwen3-coder"]
input = 0
output = 0
`;

Deno.test("a model the owner prices at 0 costs nothing and is never held for the task's budget, however many tokens it answers", async () => {
  await withSpend({ extra: FREE, budgetCents: 0 }, async ({ fake, box, task, socket }) => {
    for (let i = 0; i < 3; i++) {
      fake.answer(
        whole(chatWhole("qwen3-coder", chatUsage({ input: 2_000_000, output: 1_000_000 }))),
      );
      const answer = await send(socket, {
        path: "/v1/chat/completions",
        body: chat("qwen3-coder"),
      });
      assertEquals(answer.status, 200, answer.text);
    }
    // A budget of 0¢ holds any priced request at once; this one's was never asked.
    assertEquals((await box.admin("GET", "/approvals")).body.items, []);
    assertEquals(fake.requests.filter((r) => r.path === "/ollama/v1/chat/completions").length, 3);
    const shown = (await box.admin("GET", `/tasks/${task.id}`)).body.task;
    assertEquals(shown.spentCents, 0);
    assertEquals(shown.spend, [{
      model: "qwen3-coder",
      provider: "ollama",
      requests: 3,
      input: 6_000_000,
      output: 3_000_000,
      cacheWrite: 0,
      cacheRead: 0,
      nanocents: 0,
      unpriced: 0,
      bounded: 0,
    }]);
    const lines = await journalOf(box, task, "model.usage");
    assertEquals(lines.map((line) => [line.rates, line.nanocents]), [
      ["owner", 0],
      ["owner", 0],
      ["owner", 0],
    ]);
  });
});

Deno.test("the owner's rate for a model wins over the shipped table's, charged exactly in billionths of a cent", async () => {
  // gpt-4o-mini is listed at $0.15 and $0.60 per million; the owner says ten times that.
  const extra = `[models.prices."gpt-4o-mini"]\ninput = 1.5\noutput = 6\n`;
  await withSpend({ extra }, async ({ fake, box, task, socket }) => {
    fake.answer(whole(chatWhole("gpt-4o-mini", chatUsage({ input: 1000, output: 500 }))));
    const answer = await send(socket, { path: "/v1/chat/completions", body: chat("gpt-4o-mini") });
    assertEquals(answer.status, 200, answer.text);
    const [line] = await journalOf(box, task, "model.usage");
    // 1000 × $1.5/M + 500 × $6/M = $0.0045 = 0.45¢.
    assertEquals([line.rates, line.nanocents, line.model], ["owner", 450_000_000, "gpt-4o-mini"]);
    const row = (await box.admin("GET", `/tasks/${task.id}`)).body.task.spend[0];
    assertEquals([row.model, row.provider, row.nanocents], ["gpt-4o-mini", null, 450_000_000]);
  });
});

Deno.test("a model with no price and no reported cost is charged at the highest listed rate, and its spend and journal say so", async () => {
  await withSpend({}, async ({ fake, box, task, socket }) => {
    fake.answer(whole(chatWhole("mystery-7b", chatUsage({ input: 1000, output: 1000 }))));
    const answer = await send(socket, { path: "/v1/chat/completions", body: chat("mystery-7b") });
    assertEquals(answer.status, 200, answer.text);
    const shown = (await box.admin("GET", `/tasks/${task.id}`)).body;
    // The table's highest rates: $5 input and $25 output per million (claude-opus-4-5).
    assertEquals(shown.task.spend[0].nanocents, 1000 * 500_000 + 1000 * 2_500_000);
    assertEquals(shown.task.spend[0].unpriced, 1);
    assertEquals(shown.task.spentCents, 3);
    const line = shown.journal.find((line: { type: string }) => line.type === "model.usage");
    assertEquals(line.rates, "highest");
    assertStringIncludes(
      journalWords(line),
      "priced at the highest listed rate: no price for mystery-7b",
    );
    assertStringIncludes(journalWords(line), "see runbook.md#model-price");
  });
});

/** An Anthropic whole answer of claude-haiku-4-5 ($1 per million input) of `input` tokens. */
function haiku(input: number): ReturnType<typeof whole> {
  return whole({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-haiku-4-5",
    content: [{ type: "text", text: "Hi" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: input, output_tokens: 0 },
  });
}

const HAIKU = {
  model: "claude-haiku-4-5",
  max_tokens: 100,
  messages: [{ role: "user", content: "hello" }],
};

Deno.test("the exact spend survives a restart: the part of a cent carried is charged with the next answer after gurt serve starts again", async () => {
  await withSpend({}, async ({ fake, box, task, socket }) => {
    // 6000 input tokens at $1 per million: 0.6¢, no whole cent yet.
    fake.answer(haiku(6000));
    assertEquals(
      (await send(socket, { path: "/v1/messages", body: HAIKU, anthropic: true })).status,
      200,
    );
    assertEquals((await box.admin("GET", `/tasks/${task.id}`)).body.task.spentCents, 0);
    await box.restart();
    await until(async () => {
      try {
        return (await Deno.lstat(socket)).isSocket === true;
      } catch {
        return false;
      }
    });
    fake.answer(haiku(6000));
    assertEquals(
      (await send(socket, { path: "/v1/messages", body: HAIKU, anthropic: true })).status,
      200,
    );
    const shown = (await box.admin("GET", `/tasks/${task.id}`)).body.task;
    // 1.2¢ in all: one whole cent charged, 0.2¢ carried.
    assertEquals(shown.spentCents, 1);
    assertEquals(
      shown.spend.map((row: { requests: number; nanocents: number }) => [
        row.requests,
        row.nanocents,
      ]),
      [[2, 1_200_000_000]],
    );
    const costs = (await box.records()).filter((record) => record.event.type === "cost");
    assertEquals(costs.map((record) => record.event.cents), [1]);
  });
});

Deno.test("a budget counts the exact spend: a 1¢ call after 0.6¢ of model answers asks the owner under a 1¢ budget", async () => {
  await withSpend(
    { budgetCents: 1, tools: ["example.spend"] },
    async ({ fake, box, task, socket }) => {
      await box.writeGrant("spend", grant({ tool: "example.spend", mode: "auto" }));
      fake.answer(haiku(6000));
      assertEquals(
        (await send(socket, { path: "/v1/messages", body: HAIKU, anthropic: true })).status,
        200,
      );
      const call = task.send("example.spend", { cents: 1 }, "k1");
      // The call waits on the owner (old code: it ran at once, 0¢ + 1¢ not past 1¢).
      const approval = await Promise.race([
        pendingApproval(box, task),
        call.answer.then((answer) => `the call ran: ${JSON.stringify(answer)}`),
      ]);
      assertEquals(typeof approval, "number", String(approval));
      const items = (await box.admin("GET", "/approvals")).body.items;
      assertEquals(items.map((item: { tool: string }) => item.tool), ["example.spend"]);
      await box.admin("POST", `/approvals/${approval}/refuse`, {});
      await call.answer;
    },
  );
});

Deno.test("POST /usage takes the owner's price for a model the table lacks, and its report is a line of the task's spend", async () => {
  const extra = `[models.prices."qwen3-coder"]\ninput = 0.5\noutput = 1.5\n`;
  await withSpend({ extra }, async ({ box, task }) => {
    const tokens = { input: 1_000_000, output: 1_000_000 };
    const answer = await task.request("POST", "/usage", { model: "qwen3-coder", tokens });
    // $0.50 + $1.50 = 200¢, whole.
    assertEquals(answer, { status: 200, body: { ok: true, cents: 200 } });
    const shown = (await box.admin("GET", `/tasks/${task.id}`)).body.task;
    assertEquals(shown.spentCents, 200);
    assertEquals(
      shown.spend.map((row: { model: string; nanocents: number }) => [row.model, row.nanocents]),
      [
        ["qwen3-coder", 200_000_000_000],
      ],
    );
    const unpriced = await task.request("POST", "/usage", { model: "mystery-7b", tokens });
    assertEquals(unpriced.status, 400);
    assertStringIncludes(unpriced.body.error, "see runbook.md#model-price");
  });
});
