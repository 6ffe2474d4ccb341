/**
 * Builds the npm side of `dist/gurt`'s payload: every npm module gurt's code imports, bundled by
 * `deno bundle` into a few files in one pass (shared code in shared chunks, so each package is one
 * copy), and a deno.json whose import map names those files. The unpacked program then has about
 * 30 files of dependencies instead of node_modules' 6,000, which is what lets each start check
 * every file of it in a few milliseconds (tools/dist/header.sh).
 *
 * Usage: deno run -A --config ROOT/deno.json tools/dist/deps.ts ROOT PROGRAM_DIR
 * ROOT is the checkout; PROGRAM_DIR already holds main.ts and mod/ copied from it.
 */

const [root, program] = Deno.args;
if (root === undefined || program === undefined) {
  console.error("usage: deps.ts ROOT PROGRAM_DIR");
  Deno.exit(2);
}

/** The bare specifiers (npm packages through deno.json's imports) that any module of mod/ uses. */
async function bareSpecifiers(): Promise<string[]> {
  const files: string[] = [];
  async function walk(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) files.push(path);
    }
  }
  await walk(`${program}/mod`);
  files.sort();
  const all = `${program}/.all_modules.ts`;
  const lines = [
    `import "./main.ts";`,
    ...files.map((f) => `import "./${f.slice(program.length + 1)}";`),
  ];
  await Deno.writeTextFile(all, lines.join("\n") + "\n");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", `${root}/deno.json`, all],
    stderr: "inherit",
  }).output();
  await Deno.remove(all);
  if (!out.success) throw new Error("deno info failed on gurt's modules");
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { dependencies?: { specifier: string }[] }[];
  };
  const found = new Set<string>();
  for (const module of info.modules) {
    for (const dependency of module.dependencies ?? []) {
      const s = dependency.specifier;
      if (/^(\.|\/|node:|npm:|jsr:|file:|https?:)/.test(s)) continue;
      found.add(s);
    }
  }
  return [...found].sort();
}

/** A file name for a specifier: `@hono/zod-openapi` becomes `hono__zod-openapi`. */
function fileName(specifier: string): string {
  return specifier.replace(/^@/, "").replace(/[^A-Za-z0-9-]+/g, "_");
}

/** An export name as it may be written in `export { … }`: quoted where it is no identifier. */
function exportName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/** Modules imported for their effect on load, which others need first. */
const SIDE_EFFECTS_FIRST = ["reflect-metadata"];

const specifiers = await bareSpecifiers();
// Inside the checkout, at a fixed path, and bundled from the checkout: esbuild writes each module's
// path, relative to where it runs, into the bundle, which must come out the same wherever and
// whenever it is built.
const entries = `${root}/dist/.deps-entries`;
await Deno.remove(entries, { recursive: true }).catch(() => {});
await Deno.mkdir(entries, { recursive: true });
const imports: Record<string, string> = {};
try {
  // A module gurt imports only for what it does on load (reflect-metadata's global Reflect API,
  // which @peculiar/x509 needs before it loads) goes first, here and in the bundle.
  const ordered = [
    ...specifiers.filter((s) => SIDE_EFFECTS_FIRST.includes(s)),
    ...specifiers.filter((s) => !SIDE_EFFECTS_FIRST.includes(s)),
  ];
  for (const specifier of ordered) {
    // The names the module exports, as Deno sees them (a CommonJS module's too): written out one
    // by one, since `export *` would drop a default export and a CommonJS module's names.
    // Deno also offers a CommonJS module's exports object as "module.exports", a name gurt does
    // not import and esbuild cannot re-export.
    const names = Object.keys(await import(specifier))
      .filter((name) => name !== "module.exports")
      .sort();
    // A module with no exports is imported for its effect: the entry must still load it.
    const body = names.length === 0
      ? `import ${JSON.stringify(specifier)};\nexport {};\n`
      : `export { ${names.map(exportName).join(", ")} } from ${JSON.stringify(specifier)};\n`;
    await Deno.writeTextFile(`${entries}/${fileName(specifier)}.ts`, body);
    imports[specifier] = `./deps/${fileName(specifier)}.js`;
  }
  const bundle = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--config",
      `${root}/deno.json`,
      "--code-splitting",
      "--platform",
      "deno",
      "--format",
      "esm",
      "--outdir",
      `${program}/deps`,
      ...specifiers.map((s) => `${entries}/${fileName(s)}.ts`),
    ],
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!bundle.success) throw new Error("deno bundle failed on gurt's npm modules");
} finally {
  await Deno.remove(entries, { recursive: true });
}

// Says the bundles are ES modules, so Deno need not look into each for CommonJS, nor look for a
// package.json up every folder to the root at each start (4% of `gurt --version`'s time).
await Deno.writeTextFile(`${program}/deps/package.json`, '{ "type": "module" }\n');

const checkout = JSON.parse(await Deno.readTextFile(`${root}/deno.json`));
const config = {
  name: checkout.name,
  version: checkout.version,
  // No lock file: the payload's hash pins every byte, and the program folder is not writable.
  lock: false,
  imports,
  compilerOptions: checkout.compilerOptions,
};
await Deno.writeTextFile(`${program}/deno.json`, JSON.stringify(config, null, 2) + "\n");
console.log(`bundled ${specifiers.length} npm modules into ${program}/deps`);
