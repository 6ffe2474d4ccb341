/**
 * The import graph of the project's sources, read from the text: what boundary_test.ts holds to
 * its rules. Only relative specifiers count (npm packages are outside the graph), each resolved
 * against the file that names it.
 */

/** One file naming another. */
export interface Edge {
  /** The naming file and the named one, relative to the project root (`mod/core/core.ts`). */
  from: string;
  to: string;
  /** `import` for an import or re-export of any kind; `url` for `new URL("…", import.meta.url)`. */
  kind: "import" | "url";
  /** The specifier as written. */
  specifier: string;
}

/** The project root, without a trailing slash. */
export const ROOT: string = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/**
 * What names another file. An import statement (`import … from`, `export … from`, `import type`,
 * a bare `import "…"`) starts its line, which keeps comments out; `import("…")` is a dynamic
 * import or a `typeof import("…")` type. A `new URL("….ts", import.meta.url)` names a Worker's or
 * a role's entry module, which is loaded by URL rather than imported.
 */
const PATTERNS: { kind: Edge["kind"]; pattern: RegExp }[] = [
  { kind: "import", pattern: /^[ \t]*(?:import|export)[ \t][^;]*?\bfrom[ \t]*["']([^"']+)["']/gm },
  { kind: "import", pattern: /^[ \t]*import[ \t]*["']([^"']+)["']/gm },
  { kind: "import", pattern: /\bimport\(\s*["']([^"']+)["']\s*\)/g },
  { kind: "url", pattern: /\bnew URL\(\s*["']([^"']+\.tsx?)["']\s*,\s*import\.meta\.url\s*\)/g },
];

/** Every .ts and .tsx file under `dir` (relative to the root), fixtures left out. */
export async function sourcesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(`${ROOT}/${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory && entry.name !== "fixtures") found.push(...await sourcesUnder(path));
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) found.push(path);
  }
  return found.sort();
}

/** The relative imports and entry URLs of each file under `dir`, resolved to root-relative paths. */
export async function edgesUnder(dir: string): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const file of await sourcesUnder(dir)) {
    const text = await Deno.readTextFile(`${ROOT}/${file}`);
    for (const { kind, pattern } of PATTERNS) {
      for (const match of text.matchAll(pattern)) {
        const specifier = match[1];
        if (!specifier.startsWith(".")) continue;
        const target = new URL(specifier, `file://${ROOT}/${file}`).pathname;
        edges.push({ from: file, to: target.slice(ROOT.length + 1), kind, specifier });
      }
    }
  }
  return edges;
}

/**
 * The strongly connected parts of a graph with more than one node (Tarjan's algorithm): each is a
 * set of nodes that import one another round a cycle. Nodes in each part and the parts are sorted.
 */
export function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const parts: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      part.push(member);
    } while (member !== node);
    if (part.length > 1) parts.push(part.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return parts.sort((a, b) => a[0].localeCompare(b[0]));
}

/** One cycle through the first node of `part`, written `a → b → a`, for the failure message. */
export function cyclePath(graph: Map<string, Set<string>>, part: string[]): string {
  const members = new Set(part);
  const start = part[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of [...(graph.get(node) ?? [])].sort()) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start].join(" → ");
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return part.join(", ");
}

/** Adds the edge `from → to` to a graph kept as sets of targets. */
export function addEdge(graph: Map<string, Set<string>>, from: string, to: string): void {
  if (!graph.has(from)) graph.set(from, new Set());
  if (!graph.has(to)) graph.set(to, new Set());
  graph.get(from)!.add(to);
}
