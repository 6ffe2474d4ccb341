/**
 * The docs' example module app (docs/examples/notes-app) as an installed app: served by gurt
 * app-host in its sandbox, its tool with a cost asked of the owner and approved with the real
 * `gurt approve`, the cost charged to the task, and its secret used without reaching the task.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, taskRequest } from "../kit/mod.ts";
import { startAppBox } from "./app_kit.ts";

const NOTES = new URL("../../docs/examples/notes-app", import.meta.url).pathname;
const TOKEN = "notes-token-0123456789abcdef";

Deno.test({
  name:
    "a module app in the docs' shape: its cost approved with gurt approve and charged, its key kept from the task",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startAppBox("[approvals]\nwait_ms = 60000\n");
    try {
      await box.setKey("NOTES_TOKEN", TOKEN);
      const added = await box.add(NOTES, "notes");
      assertEquals(added.status, 200, JSON.stringify(added.body));
      const tools = added.body.app.tool_list as { name: string; cost_cents: number }[];
      assertEquals(
        tools.map((tool) => [tool.name, tool.cost_cents]),
        [["notes.add_note", 3], ["notes.export_notes", 0], ["notes.list_notes", 0]],
      );
      await box.grant({ tool: "notes.add_note", mode: "ask" });
      await box.grant({ tool: "notes.export_notes" });
      const task = await box.task(["notes.*"]);
      const call = taskRequest(box.home, task, {
        method: "POST",
        path: "/call",
        body: { tool: "notes.add_note", input: { title: "a", text: "b" }, key: "n1" },
      });
      let id: number | null = null;
      let settled: unknown = null;
      call.then((answer) => (settled = answer));
      for (let i = 0; i < 200 && id === null && settled === null; i++) {
        const listed = await box.admin("GET", "/approvals");
        const items = listed.body.items as { approval: number; task: string }[];
        id = items.find((item) => item.task === task)?.approval ?? null;
        if (id === null) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert(id !== null, `the call did not ask the owner: ${JSON.stringify(settled)}`);
      const approved = await gurt(["--home", box.home, "approve", String(id)], {
        env: { BOX_VAULT: `${box.home}/vault.env` },
      });
      assertEquals(approved.code, 0, approved.stderr);
      const answer = await call;
      assertEquals(answer.body.ok, true, JSON.stringify(answer.body));
      assertStringIncludes(JSON.stringify(answer.body.output), `${task}.n1`);
      const shown = await box.admin("GET", `/tasks/${task}`);
      assertEquals(shown.body.task.spentCents, 3, JSON.stringify(shown.body.task));
      const exported = await box.call(task, "notes.export_notes", {});
      assertEquals(exported.body.ok, true, JSON.stringify(exported.body));
      const text = JSON.stringify(exported.body);
      assert(!text.includes(TOKEN), "the app's key reached the task");
      assertStringIncludes(text, "signature");
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name:
    "an app call's key: answered once, the logged result comes back; the same call in flight is joined",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startAppBox();
    try {
      await box.setKey("NOTES_TOKEN", TOKEN);
      assertEquals((await box.add(NOTES, "notes")).status, 200);
      await box.grant({ tool: "notes.add_note" });
      await box.grant({ tool: "notes.list_notes" });
      const task = await box.task(["notes.add_note", "notes.list_notes"]);
      const input = { title: "t", text: "x" };
      // Two at once with one key: one run; then the same key again: the logged answer.
      const [first, second] = await Promise.all([
        box.call(task, "notes.add_note", input, "same"),
        box.call(task, "notes.add_note", input, "same"),
      ]);
      const again = await box.call(task, "notes.add_note", input, "same");
      for (const answer of [first, second, again]) {
        assertEquals(answer.body.ok, true, JSON.stringify(answer.body));
        // The app says added: false to a repeated key; the box never let it see one.
        assertEquals(answer.body.output.structuredContent.added, true);
      }
      const listed = await box.call(task, "notes.list_notes", {});
      assertEquals(listed.body.output.structuredContent.notes.length, 1);
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name:
    "a module app's tool that reads no key runs while another tool's key is missing, which fails saying so",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startAppBox();
    try {
      assertEquals((await box.add(NOTES, "notes")).status, 200);
      await box.grant({ tool: "notes.list_notes" });
      await box.grant({ tool: "notes.export_notes" });
      const task = await box.task(["notes.list_notes", "notes.export_notes"]);
      const listed = await box.call(task, "notes.list_notes", {});
      assertEquals(listed.body.ok, true, JSON.stringify(listed.body));
      const exported = await box.call(task, "notes.export_notes", {});
      assertEquals(exported.body.ok, false, JSON.stringify(exported.body));
      assertStringIncludes(exported.body.error, "NOTES_TOKEN is not set on this box");
      assert(!exported.body.error.startsWith("the tool failed"), exported.body.error);
    } finally {
      await box.close();
    }
  },
});
