/**
 * The owner edits an installed app's manifest and reloads it: the new manifest is recorded and
 * used; one that does not read is refused and the app stays as it was.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startAppBox } from "./app_kit.ts";

const NOTES = new URL("../../docs/examples/notes-app", import.meta.url).pathname;

Deno.test({
  name: "gurt app reload: an edited manifest is recorded and used; a broken one changes nothing",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startAppBox();
    try {
      const installed = await box.add(NOTES, "notes");
      assertEquals(installed.status, 200, JSON.stringify(installed.body));
      const manifest = `${box.home}/apps/notes/app.toml`;
      const text = await Deno.readTextFile(manifest);
      await Deno.writeTextFile(manifest, text.replace("cost_cents = 3", "cost_cents = 5"));
      const reloaded = await box.admin("POST", "/apps/notes/reload");
      assertEquals(reloaded.status, 200, JSON.stringify(reloaded.body));
      const cost = (body: { app: { tool_list: { name: string; cost_cents: number }[] } }) =>
        body.app.tool_list.find((tool) => tool.name === "notes.add_note")?.cost_cents;
      assertEquals(cost(reloaded.body), 5);
      const hash = reloaded.body.app.manifest_sha256 as string;
      await Deno.writeTextFile(manifest, text.replace('kind = "module"', 'kind = "modul"'));
      const broken = await box.admin("POST", "/apps/notes/reload");
      assertEquals(broken.status, 400);
      assertStringIncludes(broken.body.error, "app.toml:2: kind:");
      const shown = await box.admin("GET", "/apps/notes");
      assertEquals(shown.body.app.manifest_sha256, hash);
      assertEquals(cost(shown.body), 5);
      const log = await Deno.readTextFile(`${box.home}/audit/${await newest(box.home)}`);
      const added = log.split("\n").filter((line) => line.includes('"app_added"'));
      assertEquals(added.length, 2, "the add and the reload are each recorded, the broken one not");
      assert(added[1].includes(hash));
    } finally {
      await box.close();
    }
  },
});

async function newest(home: string): Promise<string> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(`${home}/audit`)) {
    if (entry.name.endsWith(".jsonl")) names.push(entry.name);
  }
  return names.sort().at(-1)!;
}
