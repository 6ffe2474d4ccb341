/**
 * The spend by model as the owner reads it, from the real main.ts against a real core whose model
 * answers come from a scripted fake: `gurt task show` (a table by model, and the note of a model
 * with no price), `gurt task list` (the exact model total) and `gurt usage [--since DATE]`.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt } from "../kit/mod.ts";
import { whole } from "../model-proxy/fake_services.ts";
import { chat, chatUsage, chatWhole, send, withSpend } from "../model-proxy/spend_kit.ts";

/** The line of `text` that holds every one of `cells`, in order, separated by spaces. */
function rowOf(text: string, cells: string[]): string | undefined {
  const pattern = new RegExp(
    cells.map((cell) => cell.replace(/[.*+?^${}()|[\]\\$]/g, "\\$&")).join("\\s+"),
  );
  return text.split("\n").find((line) => pattern.test(line));
}

Deno.test("gurt task show prints the spend by model, gurt task list its total, gurt usage the spend across tasks", async () => {
  await withSpend({}, async ({ fake, box, task, socket }) => {
    // mystery-7b has no price: the highest rates, $5 and $25 per million, so 3¢. gpt-4o-mini is
    // listed at $0.15 and $0.60: 0.075¢, shown to the nearest hundredth of a cent.
    fake.answer(whole(chatWhole("mystery-7b", chatUsage({ input: 1000, output: 1000 }))));
    assertEquals(
      (await send(socket, { path: "/v1/chat/completions", body: chat("mystery-7b") })).status,
      200,
    );
    fake.answer(whole(chatWhole("gpt-4o-mini", chatUsage({ input: 1000, output: 1000 }))));
    assertEquals(
      (await send(socket, { path: "/v1/chat/completions", body: chat("gpt-4o-mini") })).status,
      200,
    );
    const run = (args: string[]) => gurt(["--home", box.home, ...args]);

    const shown = await run(["task", "show", task.id]);
    assertEquals(shown.code, 0, shown.stderr);
    const out = shown.stdout;
    assert(
      rowOf(out, [
        "model",
        "provider",
        "requests",
        "input",
        "output",
        "cache write",
        "cache read",
        "cost",
      ]),
      out,
    );
    assert(rowOf(out, ["mystery-7b", "ollama", "1", "1000", "1000", "0", "0", "$0.0300"]), out);
    assert(rowOf(out, ["gpt-4o-mini", "-", "1", "1000", "1000", "0", "0", "$0.0008"]), out);
    assert(rowOf(out, ["total", "$0.0308"]), out);
    assertStringIncludes(out, "priced at the highest listed rate: no price for mystery-7b");
    assertStringIncludes(out, "usage mystery-7b (ollama): input 1000, output 1000");

    const listed = await run(["task", "list"]);
    assertEquals(listed.code, 0, listed.stderr);
    assert(
      rowOf(listed.stdout, [task.id, "running", "$0.03 of no budget", "models $0.0308"]),
      listed.stdout,
    );

    const usage = await run(["usage"]);
    assertEquals(usage.code, 0, usage.stderr);
    assertStringIncludes(usage.stdout, "model spend of 1 task, all time:");
    assert(
      rowOf(usage.stdout, ["mystery-7b", "ollama", "1", "1000", "1000", "0", "0", "$0.0300"]),
      usage.stdout,
    );
    assert(rowOf(usage.stdout, ["total", "$0.0308"]), usage.stdout);

    const today = new Date().toISOString().slice(0, 10);
    const since = await run(["usage", "--since", today]);
    assertEquals(since.code, 0, since.stderr);
    assert(rowOf(since.stdout, ["total", "$0.0308"]), since.stdout);
    const later = await run(["usage", "--since", "2999-01-01"]);
    assertEquals(later.code, 0, later.stderr);
    assertStringIncludes(later.stdout, "model spend of 0 tasks, since 2999-01-01T00:00:00.000Z:");
    assertStringIncludes(later.stdout, "no model answers");
    const bad = await run(["usage", "--since", "last week"]);
    assertEquals(bad.code, 1);
    assertStringIncludes(bad.stderr, "since must be a date such as 2026-12-01");

    const help = await run(["--help"]);
    assertStringIncludes(help.stdout, "usage [options]");
  });
});
