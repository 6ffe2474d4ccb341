/**
 * README.md's Layout table names every folder under mod/ once, and no folder that is not there,
 * as the roles table is held to mod/roles/table.ts (tests/roles/readme_table_test.ts).
 */
import { assert, assertEquals } from "../assert.ts";
import { ROOT } from "./import_graph.ts";

/** The paths named in the first column of the table under `## Layout`. */
async function layoutPaths(): Promise<string[]> {
  const text = await Deno.readTextFile(`${ROOT}/README.md`);
  const start = text.indexOf("\n## Layout\n");
  assert(start !== -1, "README.md has no ## Layout section");
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start + 1, end === -1 ? undefined : end);
  const rows = section.split("\n").filter((line) => line.startsWith("|")).slice(2);
  return rows.flatMap((row) => {
    const first = row.slice(1).split("|")[0];
    return [...first.matchAll(/`([^`]+)`/g)].map((match) => match[1].replace(/\/$/, ""));
  });
}

Deno.test("README's Layout table names each folder under mod/ once, and none that is not there", async () => {
  const folders: string[] = [];
  for await (const entry of Deno.readDir(`${ROOT}/mod`)) {
    if (entry.isDirectory) folders.push(`mod/${entry.name}`);
  }
  const named = (await layoutPaths()).filter((path) => path.startsWith("mod/"));
  const twice = named.filter((path, at) => named.indexOf(path) !== at);
  assertEquals(twice, [], "named twice");
  assertEquals(named.filter((path) => !folders.includes(path)), [], "named but not in mod/");
  assertEquals(folders.filter((path) => !named.includes(path)).sort(), [], "in mod/, not named");
});
