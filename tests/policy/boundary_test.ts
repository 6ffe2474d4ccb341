/**
 * The boundaries between modules. Each folder under mod/ is a module with a mod.ts; other modules
 * use it through that mod.ts (or one of the few light entries listed below), never through its
 * inner files. No module depends on itself round a cycle of folders, and no file round a cycle of
 * files. For policy this is also what keeps minting private: mod/policy/mod.ts does not export the
 * key that mints a Decision or an Ask, so with tests/policy/brand_types.ts (checked by
 * `deno check`) "only policy builds a Decision" is a fact about the code.
 */
import { assert, assertEquals } from "../assert.ts";
import { addEdge, cyclePath, cyclesOf, type Edge, edgesUnder, ROOT } from "./import_graph.ts";

/**
 * Files other modules may import besides a module's mod.ts: each loads far less than its mod.ts,
 * for commands that must start fast (a mod.ts that loads Hono, X11 or node:crypto adds about
 * 0.3 s and 15 MB to every `gurt` command).
 */
const ENTRIES: Record<string, string> = {
  "mod/config/code_dir.ts":
    "where gurt's code is, for the role table and roles/mod.ts without zod and TOML; imports nothing",
  "mod/config/home_paths.ts":
    "the box home's shared paths, for the role table without zod and TOML; imports nothing",
  "mod/config/listen_address.ts":
    "the loopback listen address grammar, for the portal role's permissions without zod; imports nothing",
  "mod/apps/app_folder.ts":
    "reads an app's folder for `gurt app add PATH` in the CLI role, without the MCP SDK or Ajv; imports nothing",
  "mod/apps/kept_names.ts":
    "the tool names of the apps' kept tool lists, for `gurt grants` without the core; imports nothing",
  "mod/audit/verify.ts": "the read side for `gurt audit`, without zod or node:crypto at start",
  "mod/exec-guest/settings.ts": "the guest's defaults for `gurt guest --help`; imports nothing",
  "mod/cua/options.ts":
    "the desktop's defaults for `gurt guest --help`, and its X socket for the role table; imports nothing",
  "mod/runtime/system_layout.ts":
    "the system paths the core's permissions name, for the role table; imports only types",
  "mod/vault/names.ts":
    "vault key names, for the app host's check of a module's secrets without zod; imports nothing",
  "mod/config/host_entry.ts":
    "the egress host grammar, for `gurt app-host`'s GURT_APP_HOSTS without zod; imports nothing",
  "mod/sandbox/etc_paths.ts":
    "the /etc paths a task's sandbox mounts, which the core's permissions name, for the role table; imports nothing",
};

/**
 * The one file that names each role's entry module (the module the role's Worker runs) by URL. It
 * loads none of them, so those URLs are not imports of inner files; an import of an entry is.
 */
const ROLE_TABLE = "mod/roles/table.ts";

/**
 * File cycles that another change is removing. A listed cycle that is gone fails the test too,
 * so the list only shrinks.
 */
const KNOWN_FILE_CYCLES: string[][] = [];

const edges: Edge[] = await edgesUnder("mod");

/** `mod/core` for `mod/core/core.ts`; null for a file outside mod/. */
function moduleOf(file: string): string | null {
  const match = /^mod\/[^/]+(?=\/)/.exec(file);
  return match === null ? null : match[0];
}

async function modules(): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(`${ROOT}/mod`)) {
    if (entry.isDirectory) found.push(`mod/${entry.name}`);
  }
  return found.sort();
}

Deno.test("every module under mod/ has a mod.ts", async () => {
  const missing: string[] = [];
  for (const module of await modules()) {
    const found = await Deno.stat(`${ROOT}/${module}/mod.ts`).then(() => true, () => false);
    if (!found) missing.push(module);
  }
  assertEquals(missing, []);
});

Deno.test("no module imports another module's inner files, only its mod.ts", async () => {
  const inner = edges.filter((edge) => {
    const from = moduleOf(edge.from);
    const to = moduleOf(edge.to);
    const roleEntry = edge.kind === "url" && edge.from === ROLE_TABLE;
    return from !== to && to !== null && edge.to !== `${to}/mod.ts` && !(edge.to in ENTRIES) &&
      !roleEntry;
  });
  assertEquals(inner.map((edge) => `${edge.from} → ${edge.to} (${edge.kind})`), []);
  for (const entry of Object.keys(ENTRIES)) {
    assert(await Deno.stat(`${ROOT}/${entry}`).then(() => true, () => false), `${entry} is gone`);
  }
});

Deno.test("each module the role table names by URL is a role's entry: it has a default export", async () => {
  const named = edges.filter((edge) => edge.from === ROLE_TABLE && edge.kind === "url");
  assert(named.length > 0, `${ROLE_TABLE} names no entry`);
  const without: string[] = [];
  for (const edge of named) {
    const text = await Deno.readTextFile(`${ROOT}/${edge.to}`);
    if (!/^export default /m.test(text)) without.push(edge.to);
  }
  assertEquals(without, []);
});

Deno.test("no folder under mod/ depends on itself round a cycle of folders", () => {
  const graph = new Map<string, Set<string>>();
  for (const edge of edges) {
    const from = moduleOf(edge.from);
    const to = moduleOf(edge.to);
    if (from !== null && to !== null && from !== to) addEdge(graph, from, to);
  }
  assertEquals(cyclesOf(graph).map((part) => `${part.join(", ")}: ${cyclePath(graph, part)}`), []);
});

Deno.test("no file under mod/ imports itself round a cycle of files", () => {
  const graph = new Map<string, Set<string>>();
  // Entry URLs are loaded by a Worker or a role, not when the naming file loads: not counted here.
  for (const edge of edges) if (edge.kind === "import") addEdge(graph, edge.from, edge.to);
  const known = KNOWN_FILE_CYCLES.map((part) => part.join(" "));
  const cycles = cyclesOf(graph);
  const found = cycles.map((part) => part.join(" "));
  assertEquals(
    cycles.filter((part) => !known.includes(part.join(" "))).map((part) => cyclePath(graph, part)),
    [],
  );
  assertEquals(
    known.filter((part) => !found.includes(part)),
    [],
    "a known cycle is gone: delete it from KNOWN_FILE_CYCLES in tests/policy/boundary_test.ts",
  );
});

Deno.test("no file outside mod/policy, tests and bench included, imports a policy file other than mod.ts", async () => {
  const all = [...edges, ...await edgesUnder("tests"), ...await edgesUnder("bench")];
  const inside = all.filter((edge) =>
    !edge.from.startsWith("mod/policy/") && edge.to.startsWith("mod/policy/") &&
    edge.to !== "mod/policy/mod.ts"
  );
  assertEquals(inside.map((edge) => `${edge.from}: ${edge.specifier}`), []);
});

/**
 * Folders that may not import another at all, not even its mod.ts: the model endpoint's path is one
 * room (mod/model-proxy holds its redaction, its prices and its checks); the broker uses it, never
 * the other way round.
 */
const FORBIDDEN_IMPORTS: { from: string; to: string; why: string }[] = [
  {
    from: "mod/model-proxy",
    to: "mod/broker",
    why: "the model endpoint's code lives in mod/model-proxy; the broker imports it, not back",
  },
];

Deno.test("mod/model-proxy imports nothing from mod/broker", () => {
  const found: string[] = [];
  for (const rule of FORBIDDEN_IMPORTS) {
    for (const edge of edges) {
      if (moduleOf(edge.from) === rule.from && moduleOf(edge.to) === rule.to) {
        found.push(`${edge.from} → ${edge.to}: ${rule.why}`);
      }
    }
  }
  assertEquals(found, []);
});

/**
 * mod/workdir (a task's workdirs: their grants, their id-mapped mounts, their listings) is a room
 * below the core: it decides with mod/policy and imports no other module of gurt's, so the core,
 * which writes the records and starts the sandbox, uses it and it never reaches back.
 */
const WORKDIR_MAY_IMPORT = new Set(["mod/workdir", "mod/policy"]);

Deno.test("mod/workdir imports only mod/policy of gurt's modules", () => {
  const found = edges.filter((edge) => moduleOf(edge.from) === "mod/workdir")
    .map((edge) => moduleOf(edge.to))
    .filter((to) => to !== null && !WORKDIR_MAY_IMPORT.has(to));
  assertEquals(found, []);
});

Deno.test("mod/policy/mod.ts does not re-export the minting key", async () => {
  const text = await Deno.readTextFile(`${ROOT}/mod/policy/mod.ts`);
  assertEquals(/\bmint\b/.test(text), false);
  const decide = await Deno.readTextFile(`${ROOT}/mod/policy/decide.ts`);
  assertEquals(
    /export\s+(const|let|var)\s+mint\b/.test(decide),
    false,
    "the key stays private to decide.ts",
  );
});
