/**
 * The hostile app of the confinement and failure tests: tests/apps/hostile_server.js copied into
 * an app's folder as evil.js and run as `node BOX_HOME/apps/NAME/evil.js LIST MARKER`, MARKER a
 * fresh word that finds its process in the host's /proc. Its probe tools answer with what they
 * got as JSON. (Only command[0] is resolved in the folder: `node ./evil.js` would look for the
 * script in the app's home, its working directory.)
 */
import type { AppBox } from "./app_kit.ts";
import type { Json } from "../kit/mod.ts";

const SERVER = await Deno.readTextFile(new URL("./hostile_server.js", import.meta.url));

/** A hostile app's source, as added. */
export interface Hostile {
  name: string;
  folder: string;
  /** The word in its argv, which no other process holds. */
  marker: string;
}

/**
 * Writes the source folder of hostile app `name`: its tool list `list` ("probe" or a bad one),
 * `extra` lines after its command (secrets, hosts), `args` after the marker.
 */
export async function hostileSource(
  box: AppBox,
  name: string,
  options: { list?: string; extra?: string[]; args?: string[] } = {},
): Promise<Hostile> {
  const marker = `hostile-${crypto.randomUUID()}`;
  const script = `${box.home}/apps/${name}/evil.js`;
  const command = ["node", script, options.list ?? "probe", marker, ...(options.args ?? [])];
  const manifest =
    ['kind = "mcp"', `command = ${JSON.stringify(command)}`, ...(options.extra ?? [])]
      .join("\n") + "\n";
  const folder = await box.source(name, manifest, { "evil.js": SERVER });
  return { name, folder, marker };
}

/** Adds a hostile app with grants for its probe tools; throws unless the add succeeds. */
export async function addHostile(
  box: AppBox,
  name: string,
  options: Parameters<typeof hostileSource>[2] = {},
): Promise<Hostile> {
  const hostile = await hostileSource(box, name, options);
  const added = await box.add(hostile.folder, name);
  if (added.status !== 200) throw new Error(`add ${name}: ${JSON.stringify(added.body)}`);
  // Every tool it lists (hostile_server.js's probes), as the core listed them.
  const shown = await box.admin("GET", `/apps/${name}`);
  for (const tool of shown.body.app.tool_list as { name: string }[]) {
    await box.grant({ tool: tool.name });
  }
  return hostile;
}

/** A probe's answer (the JSON its text content holds), or throws with the call's body. */
export async function probe(
  box: AppBox,
  task: string,
  tool: string,
  input: unknown = {},
): Promise<Json> {
  const answer = await box.call(task, tool, input);
  const text = answer.body?.output?.content?.[0]?.text;
  if (answer.status !== 200 || answer.body.ok !== true || typeof text !== "string") {
    throw new Error(`${tool}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return JSON.parse(text);
}

/** The host's pids whose argv holds `word` (the marker, or a value that must be nowhere). */
export async function pidsWith(word: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const argv = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (argv.includes(word)) pids.push(Number(entry.name));
  }
  return pids.filter((pid) => pid !== Deno.pid);
}
