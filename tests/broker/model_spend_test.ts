/** A journal's model.usage lines: the spend by model they sum to, and the part of a cent carried. */
import { assertEquals } from "../assert.ts";
import { readState } from "../../mod/broker/journal_lines.ts";
import { carriedNanocents, spendRows } from "../../mod/broker/mod.ts";

function usage(model: string, nanocents: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: "model.usage",
    time: "2026-12-04T00:00:00Z",
    service: "openai",
    model,
    tokens: { input: 10, output: 5, cacheWrite: 1, cacheRead: 2 },
    nanocents,
    rates: "listed",
    hold: "h0",
    ...extra,
  });
}

function cost(cents: number, hold?: string): string {
  return JSON.stringify({
    type: "cost",
    time: "2026-12-04T00:00:01Z",
    cents,
    what: hold === undefined ? "model" : `model hold ${hold}`,
    ...(hold === undefined ? {} : { hold }),
  });
}

Deno.test("model.usage lines sum by model and provider, most expensive first, the unpriced and bounded counted", () => {
  const state = readState(
    [
      usage("gpt-5", 600_000_000),
      usage("gpt-5", 700_000_000, { rates: "highest", cut: "bound" }),
      usage("qwen3-coder", 0, { provider: "ollama", rates: "owner" }),
      usage("gpt-5", 5, { provider: "openrouter", rates: "reported" }),
    ].join("\n") + "\n",
  );
  assertEquals(
    spendRows(state.models).map((row) => [
      row.model,
      row.provider,
      row.requests,
      row.input,
      row.cacheRead,
      row.nanocents,
      row.unpriced,
      row.bounded,
    ]),
    [
      ["gpt-5", null, 2, 20, 4, 1_300_000_000, 1, 1],
      ["gpt-5", "openrouter", 1, 10, 2, 5, 0, 0],
      ["qwen3-coder", "ollama", 1, 10, 2, 0, 0, 0],
    ],
  );
  assertEquals(state.modelNanocents, 1_300_000_005);
});

Deno.test("the part of a cent carried is the endpoint's usage past its whole-cent charges, which name their holds; a task's own /cost and /usage lines neither eat nor add to it", () => {
  const lines = [usage("gpt-5", 600_000_000), cost(1)];
  assertEquals(carriedNanocents(readState(lines.join("\n") + "\n")), 600_000_000);
  lines.push(usage("gpt-5", 600_000_000), cost(1, "h1"));
  const state = readState(lines.join("\n") + "\n");
  assertEquals(carriedNanocents(state), 200_000_000);
  assertEquals(state.spentCents, 2);
  // A task's own /usage report names no hold: charged whole cents at once, it carries nothing.
  const reported = [...lines, usage("gpt-5", 300_000_000, { service: "task", hold: undefined })];
  assertEquals(carriedNanocents(readState(reported.join("\n") + "\n")), 200_000_000);
  // A charge recovered at its bound, with no usage line, leaves nothing carried (never below 0).
  lines.push(cost(50, "h2"));
  assertEquals(carriedNanocents(readState(lines.join("\n") + "\n")), 0);
});
