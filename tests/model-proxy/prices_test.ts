/**
 * The box has one price of model tokens (mod/model-proxy/prices.ts): `POST /usage` on a task's
 * socket and the model endpoint's charge for an answer price the same tokens of the same model
 * alike, under the same names (a dated snapshot at its alias's rates). The endpoint charges the
 * exact fraction; /usage rounds each report up to a whole cent, and nothing else differs.
 */
import { assertEquals } from "../assert.ts";
import { withBox } from "../kit/mod.ts";
import { chargedCents, exactCents, type TokenCounts } from "../../mod/model-proxy/prices.ts";
import prices from "../../mod/model-proxy/prices.json" with { type: "json" };

const LISTED = Object.keys(prices.models);

/** Token counts whose prices land on, just past and well past whole cents. */
const COUNTS: TokenCounts[] = [
  { input: 1, output: 0, cacheWrite: 0, cacheRead: 0 },
  { input: 1_000_000, output: 0, cacheWrite: 0, cacheRead: 0 },
  { input: 3_333, output: 1_234, cacheWrite: 77, cacheRead: 100_001 },
  { input: 0, output: 1_000_000, cacheWrite: 4, cacheRead: 0 },
  { input: 120_000, output: 40_000, cacheWrite: 10_000, cacheRead: 500_000 },
];

/** A model's names: as listed, and as an Anthropic and an OpenAI dated snapshot of it. */
function namesOf(model: string): string[] {
  return [model, `${model}-20250929`, `${model}-2025-08-07`];
}

Deno.test("exactCents is what the model endpoint charges a listed model, under every name of it", () => {
  for (const model of LISTED) {
    for (const name of namesOf(model)) {
      for (const tokens of COUNTS) {
        const endpoint = chargedCents({ asked: name, answered: null }, tokens);
        assertEquals(endpoint, { cents: exactCents(model, tokens)!, listed: true }, name);
      }
    }
  }
});

Deno.test("a price that is a whole number of cents is that number exactly, so rounding up adds nothing", () => {
  // 1e6 tokens at every listed rate are whole thousandths of a cent; 1e9 are whole cents.
  for (const model of LISTED) {
    const cents = exactCents(model, { input: 1e9, output: 1e9, cacheWrite: 1e9, cacheRead: 1e9 })!;
    assertEquals(Number.isInteger(cents), true, `${model}: ${cents}`);
    assertEquals(Math.ceil(cents), cents);
  }
});

Deno.test("POST /usage charges what the model endpoint would, rounded up to a whole cent, under the same model names", async () => {
  // Fails on the old code: /usage priced by its own function, which knew no dated snapshot
  // (`claude-sonnet-4-5-20250929` was a 400 there while the endpoint charged it).
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const asked = [
      { model: "claude-sonnet-4-5-20250929", tokens: COUNTS[2] },
      { model: "gpt-5-2025-08-07", tokens: COUNTS[4] },
      { model: "gpt-5-nano", tokens: COUNTS[0] },
      { model: "claude-opus-4-5", tokens: COUNTS[3] },
    ];
    for (const { model, tokens } of asked) {
      const answer = await task.request("POST", "/usage", { model, tokens });
      const endpoint = chargedCents({ asked: model, answered: null }, tokens);
      assertEquals(endpoint.listed, true, model);
      assertEquals(answer, { status: 200, body: { ok: true, cents: Math.ceil(endpoint.cents) } });
    }
    // Counts it leaves out are none of that kind, as an answer's usage that names none.
    const { input, output } = COUNTS[2];
    const short = await task.request("POST", "/usage", {
      model: "claude-haiku-4-5",
      tokens: { input, output },
    });
    const whole = { input, output, cacheWrite: 0, cacheRead: 0 };
    assertEquals(short.body.cents, Math.ceil(exactCents("claude-haiku-4-5", whole)!));
    const unlisted = await task.request("POST", "/usage", {
      model: "gpt-9",
      tokens: { input, output },
    });
    assertEquals(unlisted.status, 400);
  });
});
