/**
 * A journal write that a full disk cut short (a real ENOSPC on a small tmpfs under the box home's
 * tasks/) leaves no fragment for the next line to be glued to: the write is cut back, so a call's
 * acknowledged result written after it is still its key's answer after a restart, and nothing runs
 * again.
 */
import { assert, assertEquals } from "../assert.ts";
import { grant, heldTool, startBox, until } from "../kit/mod.ts";
import { canMount, mountSmallDisk } from "../kit/small_disk.ts";

Deno.test({
  name:
    "a journal line cut short by ENOSPC is cut off: the next call's result is answered by its key after a restart",
  ignore: !canMount(),
  fn: async () => {
    const home = await Deno.makeTempDir({ prefix: "gurt-torn-" });
    const disk = await mountSmallDisk(`${home}/tasks`, 1024 * 1024);
    const held = heldTool("test.held", 1);
    const box = await startBox({
      home,
      grants: { held: grant({ tool: "test.held" }) },
      tools: [held.tool],
    });
    try {
      const task = await box.startTask({ tools: ["test.held"] });
      const journal = `${home}/tasks/${task.id}/journal.jsonl`;
      const first = task.call("test.held", { n: 1 }, "k1");
      await until(() => held.started.length === 1);
      // A step synced beside the call's tool.call line: the journal has part of a page in use.
      assertEquals((await task.request("POST", "/step", { text: "before" })).status, 200);
      await disk.fill(`${task.id}/home/filler`);
      const size = (await Deno.stat(journal)).size;
      const cut = await task.request("POST", "/step", { text: "x".repeat(20_000) });
      assertEquals(cut.status, 500, JSON.stringify(cut.body));
      const afterCut = (await Deno.stat(journal)).size;
      await disk.free();

      held.release();
      assertEquals(await first, { ok: true, output: { n: 1 } });
      const text = await Deno.readTextFile(journal);
      const lines = text.trimEnd().split("\n");
      for (const line of lines) JSON.parse(line); // every line whole
      assertEquals(JSON.parse(lines[lines.length - 1]).type, "tool.result");

      await box.restart();
      const again = await box.admin("GET", `/tasks/${task.id}`);
      assert(again.status === 200, JSON.stringify(again.body));
      const reopened = { ...task };
      assertEquals(
        (await reopened.request("POST", "/call", { tool: "test.held", input: { n: 1 }, key: "k1" }))
          .body,
        { ok: true, output: { n: 1 } },
      );
      assertEquals(held.started, [1], "the key's call ran again after the restart");
      // The step's write went in part way (a real short write, to the end of its page) and was cut back.
      assertEquals(afterCut, size);
    } finally {
      held.release();
      await box.core.close();
      await disk.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});
