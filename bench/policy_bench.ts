/**
 * The decision path's cost (issue 4): decisions per second for a box home with 10 and with 200
 * grant files, each decision reading every file as docs/grants.md#where-grants-live requires, and
 * `decide` alone on parsed grants. The baseline is a bare read of the same files (list the
 * directory, read each file), measured in the same run: what no decision path that reads the files
 * can beat.
 */
import { decide, type GrantSet, loadGrants, type ToolRequest } from "../mod/policy/mod.ts";
import { type BenchRow, printTable } from "./table.ts";
import { standardRegistry } from "../mod/tools/mod.ts";
import { rate as rateOf } from "./measure.ts";

/** The app tools of a standard box, as the core passes them. */
const APP_TOOLS = standardRegistry().appToolNames();

const options = { appTools: APP_TOOLS };
const state = { taint: "private", untrusted: false } as const;
const request: ToolRequest = { tool: "read_file", arguments: { path: "/home/kyle/p5/notes/a.md" } };

/** A realistic grant file: the four built-ins and an app tool, in turn. */
function grantText(i: number): string {
  const head = (tool: string, mode: string) =>
    `tool = "${tool}"\nmode = "${mode}"\nmax_taint = "secret"\nresult_class = "private"\n` +
    `untrusted = false\nexpires = "2030-01-01T00:00:00.000Z"\n`;
  switch (i % 5) {
    case 0:
      return head("read_file", "auto") +
        `\n[constraints]\npaths = ["/home/kyle/p${i}", "/srv/p${i}"]\n`;
    case 1:
      return head("write_file", "ask") + `\n[constraints]\npaths = ["/home/kyle/p${i}/out"]\n`;
    case 2:
      return head("shell", "ask") + `\n[constraints]\npaths = ["/home/kyle/p${i}"]\n`;
    case 3:
      return head("http_fetch", "auto") +
        `\n[constraints]\nhosts = ["api${i}.example.com", "*.cdn${i}.net"]\n`;
    default:
      return head("example.spend", "ask");
  }
}

async function makeHome(count: number): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-policy-bench-" });
  await Deno.mkdir(`${dir}/grants`);
  for (let i = 0; i < count; i++) {
    await Deno.writeTextFile(`${dir}/grants/g-${String(i).padStart(3, "0")}.toml`, grantText(i));
  }
  return dir;
}

async function bareRead(dir: string): Promise<number> {
  let bytes = 0;
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.endsWith(".toml")) names.push(entry.name);
  }
  const files = await Promise.all(names.sort().map((name) => Deno.readFile(`${dir}/${name}`)));
  for (const file of files) bytes += file.length;
  return bytes;
}

async function loadAndDecide(dir: string): Promise<string> {
  const load = await loadGrants(dir, options);
  if (!load.ok) throw new Error(JSON.stringify(load.problems));
  return decide(request, { grants: load.grants, state, now: new Date() }).kind;
}

const homes: string[] = [];
try {
  const rows: BenchRow[] = [];
  let parsed200: GrantSet | null = null;
  let bare10 = 0;
  for (const count of [10, 200]) {
    const home = await makeHome(count);
    homes.push(home);
    const dir = `${home}/grants`;
    const outcome = await loadAndDecide(dir);
    if (outcome !== "allowed") {
      throw new Error(`the bench request should be allowed, got ${outcome}`);
    }
    const bare = await rate(() => bareRead(dir));
    const full = await rate(() => loadAndDecide(dir));
    if (count === 10) bare10 = bare;
    rows.push({
      what: `decisions/s, ${count} grant files read per decision`,
      unit: "/s",
      value: full,
      baselineWhat: `bare read of the ${count} files`,
      baseline: bare,
      target: ">= 0.3",
    });
    if (count === 200) {
      const load = await loadGrants(dir, options);
      if (load.ok) parsed200 = load.grants;
    }
  }
  if (parsed200 === null) throw new Error("the 200-file home did not load");
  const grants = parsed200;
  const now = new Date();
  const alone = await rate(() => decide(request, { grants, state, now }));
  rows.push({
    what: "decide alone, 200 parsed grants",
    unit: "/s",
    value: alone,
    baselineWhat: "bare read of 10 files",
    baseline: bare10,
    target: ">= 10",
  });
  printTable(rows);
} finally {
  for (const home of homes) await Deno.remove(home, { recursive: true });
}

/** Operations per second of `op`, checked every ten operations. */
function rate(op: () => Promise<unknown> | unknown, ms = 1500): Promise<number> {
  return rateOf(op, { ms, batch: 10 });
}
