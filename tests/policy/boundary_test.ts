/**
 * Outside mod/policy, code imports policy only through mod/policy/mod.ts, which does not export
 * the key that mints a Decision or an Ask. Together with tests/policy/brand_types.ts (checked by
 * `deno check`), this makes "only policy builds a Decision" a fact about the code.
 */
import { assertEquals } from "../assert.ts";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory && entry.name !== "fixtures") yield* sources(path);
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) yield path;
  }
}

/** The imports of policy files other than mod.ts, in files outside mod/policy. */
async function insideImports(folders: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const folder of folders) {
    for await (const file of sources(`${root}/${folder}`)) {
      if (file.startsWith(`${root}/mod/policy/`)) continue;
      const text = await Deno.readTextFile(file);
      // Every relative specifier after `from` or `import(`, resolved against the importing file.
      for (const match of text.matchAll(/(?:from|import\()\s*["'](\.[^"']+)["']/g)) {
        const target = new URL(match[1], `file://${file}`).pathname;
        if (target.startsWith(`${root}/mod/policy/`) && target !== `${root}/mod/policy/mod.ts`) {
          found.push(`${file.slice(root.length + 1)}: ${match[1]}`);
        }
      }
    }
  }
  return found;
}

Deno.test("no module outside mod/policy imports a policy file other than mod.ts", async () => {
  assertEquals(await insideImports(["mod", "tests", "bench"]), []);
});

Deno.test("mod/policy/mod.ts does not re-export the minting key", async () => {
  const text = await Deno.readTextFile(`${root}/mod/policy/mod.ts`);
  assertEquals(/\bmint\b/.test(text), false);
  const decide = await Deno.readTextFile(`${root}/mod/policy/decide.ts`);
  assertEquals(
    /export\s+(const|let|var)\s+mint\b/.test(decide),
    false,
    "the key stays private to decide.ts",
  );
});
