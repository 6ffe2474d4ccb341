/**
 * `gurt mcp` answers initialize and tools/list within 150 ms of starting (bench/mcp_bench.ts times
 * it): Droid lists tools once, early, and missed the box's tools when the relay took 0.4 s. What
 * made it slow was loading: the whole CLI (commander, zod, TOML) before the role started, then the
 * MCP SDK's server in the role. This holds what `gurt mcp` runs to that: main.ts's code imports
 * (not its type imports, which run nothing), the role's Worker entry and the relay's module. None
 * of them loads an npm package.
 */
import { assertEquals } from "../assert.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

interface Graph {
  modules: {
    specifier: string;
    kind?: string;
    dependencies?: { code?: { specifier: string } }[];
  }[];
  redirects: Record<string, string>;
}

/** Every module that running `file` loads: its imports' closure, type-only imports left out. */
async function runtimeModules(file: string): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", `${ROOT}deno.json`, `${ROOT}${file}`],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as Graph;
  const bySpecifier = new Map(graph.modules.map((module) => [module.specifier, module]));
  const resolve = (specifier: string) => graph.redirects[specifier] ?? specifier;
  const seen = new Set<string>();
  const todo = [resolve(new URL(file, `file://${ROOT}`).href)];
  while (todo.length > 0) {
    const specifier = todo.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dependency of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dependency.code !== undefined) todo.push(resolve(dependency.code.specifier));
    }
  }
  return [...seen].map((specifier) => specifier.replace(`file://${ROOT}`, "")).sort();
}

Deno.test("what gurt mcp loads before it answers holds no npm package (no CLI, no zod, no MCP SDK) and no node:crypto", async () => {
  for (const file of ["main.ts", "mod/roles/worker_entry.ts", "mod/mcp/relay_main.ts"]) {
    const heavy = (await runtimeModules(file)).filter((specifier) =>
      specifier.startsWith("npm:") || specifier === "node:crypto"
    );
    assertEquals(heavy, [], `${file} loads these`);
  }
});
