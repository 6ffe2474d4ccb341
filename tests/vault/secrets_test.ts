/** Declared secrets: a tool reads only the keys it declares, and not one the owner turned off. */
import { z } from "zod";
import { assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { defineTool } from "../../mod/tools/mod.ts";
import { grant, startBox, type TestBox } from "../kit/mod.ts";
import { vaultFolder } from "./helpers.ts";

const STRIPE = "sk_live_declared_value_0001";
const WALLET = "wallet-undeclared-value-0002";

/** A test app `shop` whose tool declares STRIPE_SECRET_KEY and reads whichever key it is told to. */
const read = defineTool({
  name: "shop.read",
  description: "Reads a vault key and says how long it is (test only).",
  input: z.strictObject({ name: z.string() }),
  secrets: ["STRIPE_SECRET_KEY"],
  run: (ctx, input) => {
    const value = ctx.secret(input.name);
    return Promise.resolve({ length: value.length, key: ctx.key });
  },
});

async function withShop(fn: (box: TestBox) => Promise<void>): Promise<void> {
  const folder = await vaultFolder(`STRIPE_SECRET_KEY=${STRIPE}\nWALLET_SOLANA_KEY=${WALLET}\n`);
  const box = await startBox({
    env: { BOX_VAULT: folder.path },
    tools: [read as never],
    grants: { shop: grant({ tool: "shop.read" }) },
  });
  try {
    await fn(box);
  } finally {
    await box.close();
    await folder.remove();
  }
}

Deno.test("a declared key is read, and ctx.key is <task id>.<key>", async () => {
  await withShop(async (box) => {
    const task = await box.startTask({ tools: ["shop.read"] });
    const answer = await task.call("shop.read", { name: "STRIPE_SECRET_KEY" }, "k1");
    assertEquals(answer, { ok: true, output: { length: STRIPE.length, key: `${task.id}.k1` } });
  });
});

Deno.test("secret() of a key the tool did not declare throws, and the result says so without the value", async () => {
  await withShop(async (box) => {
    const task = await box.startTask({ tools: ["shop.read"] });
    const answer = await task.call("shop.read", { name: "WALLET_SOLANA_KEY" }, "k1");
    assertEquals(answer.ok, false);
    assertStringIncludes(
      answer.error,
      "the vault key WALLET_SOLANA_KEY is not among the secrets this tool of shop declares " +
        "(STRIPE_SECRET_KEY)",
    );
    assertStringIncludes(answer.error, "see runbook.md#secret-refused");
    assertNotIncludes(JSON.stringify(answer), WALLET);
    const journal = await Deno.readTextFile(`${box.home}/tasks/${task.id}/journal.jsonl`);
    assertNotIncludes(journal, WALLET);
  });
});

Deno.test("secret() of a declared key the owner turned off for the app throws until allowed again", async () => {
  await withShop(async (box) => {
    const task = await box.startTask({ tools: ["shop.read"] });
    const denied = await box.admin("POST", "/api/vault/STRIPE_SECRET_KEY/deny", {
      app: "shop",
    });
    assertEquals(denied.status, 200);
    const answer = await task.call("shop.read", { name: "STRIPE_SECRET_KEY" }, "k1");
    assertEquals(answer.ok, false);
    assertStringIncludes(
      answer.error,
      "the box owner has turned off the vault key STRIPE_SECRET_KEY for the app shop",
    );
    assertNotIncludes(JSON.stringify(answer), STRIPE);
    await box.admin("POST", "/api/vault/STRIPE_SECRET_KEY/allow", { app: "shop" });
    const again = await task.call("shop.read", { name: "STRIPE_SECRET_KEY" }, "k2");
    assertEquals(again.ok, true);
  });
});

Deno.test("a key set while the box runs is readable at once; a removed one is not set", async () => {
  await withShop(async (box) => {
    const task = await box.startTask({ tools: ["shop.read"] });
    await box.admin("PUT", "/api/vault/STRIPE_SECRET_KEY", { value: "sk_live_new_0003" });
    const answer = await task.call("shop.read", { name: "STRIPE_SECRET_KEY" }, "k1");
    assertEquals(answer.output.length, "sk_live_new_0003".length);
    await box.admin("DELETE", "/api/vault/STRIPE_SECRET_KEY");
    const gone = await task.call("shop.read", { name: "STRIPE_SECRET_KEY" }, "k2");
    assertStringIncludes(gone.error, "the vault key STRIPE_SECRET_KEY is not set on this box");
  });
});
