/** The role table is the one place roles are written, and it covers every command that starts one. */
import { assertEquals } from "../assert.ts";
import { buildProgram } from "../../mod/cli/mod.ts";
import { ROLE_TABLE, type RoleTable } from "../../mod/roles/mod.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await sources(path));
    else if (/\.tsx?$/.test(entry.name)) found.push(path);
  }
  return found.sort();
}

Deno.test("no file under mod/ but mod/roles writes a role's permissions or starts a role", async () => {
  const outside: string[] = [];
  for (const file of await sources("mod")) {
    if (file.startsWith("mod/roles/")) continue;
    const text = await Deno.readTextFile(`${ROOT}${file}`);
    if (/\bRolePermissions\b/.test(text)) outside.push(`${file}: RolePermissions`);
    if (/\brunRole\b/.test(text)) outside.push(`${file}: runRole`);
  }
  assertEquals(outside, []);
});

Deno.test("every command the role table names is a subcommand of gurt", () => {
  const subcommands = buildProgram().commands.map((command) => command.name());
  const starts = Object.values(ROLE_TABLE) as RoleTable[keyof RoleTable][];
  const unknown = starts.flatMap((start) => start.commands)
    .filter((name) => !subcommands.includes(name));
  assertEquals(unknown, []);
});
