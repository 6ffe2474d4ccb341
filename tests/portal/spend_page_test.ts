/**
 * A task's page in the portal shows its spend by model: a small table rendered on the server (it
 * needs no JavaScript), its total, and the note of a model with no price.
 */
import { assert, assertEquals } from "../assert.ts";
import { whole } from "../model-proxy/fake_services.ts";
import {
  chat,
  chatUsage,
  chatWhole,
  pathFake,
  send,
  spendBoxOptions,
} from "../model-proxy/spend_kit.ts";
import { startPortalBox } from "./helpers.ts";

function has(html: string, text: string): void {
  assert(html.includes(text), `the page does not hold ${text}`);
}

Deno.test({
  name:
    "a task's page shows a table of its spend by model, with tokens, requests, cost, total and the note of a model with no price",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const fake = pathFake();
    const pb = await startPortalBox(spendBoxOptions(fake.url));
    try {
      const task = await pb.box.startTask();
      const socket = `${pb.box.home}/tasks/${task.id}/model.sock`;
      fake.answer(whole(chatWhole("mystery-7b", chatUsage({ input: 1000, output: 1000 }))));
      const body = chat("mystery-7b");
      assertEquals((await send(socket, { path: "/v1/chat/completions", body })).status, 200);
      const { cookie } = await pb.signIn();
      const response = await fetch(`${pb.origin}/tasks/${task.id}`, { headers: { cookie } });
      assertEquals(response.status, 200);
      const page = await response.text();
      has(page, "<h2>Spend by model</h2>");
      const table = page.slice(
        page.indexOf("<h2>Spend by model</h2>"),
        page.indexOf("<h2>Journal</h2>"),
      );
      for (
        const cell of [
          '<td data-label="Model">mystery-7b</td>',
          '<td data-label="Provider">ollama</td>',
          '<td data-label="Requests">1</td>',
          '<td data-label="Input">1000</td>',
          '<td data-label="Output">1000</td>',
          '<td data-label="Cost">$0.0300</td>',
          '<td data-label="Model">Total</td>',
        ]
      ) has(table, cell);
      has(table, "priced at the highest listed rate: no price for mystery-7b");
      // The journal line says it too.
      has(page, "usage mystery-7b (ollama)");
    } finally {
      await pb.close();
      await fake.close();
    }
  },
});
