/** The runbook gate: every `runbook.md#<anchor>` written in the code must name a heading. */

/** One pointer found in a source file. */
export interface Pointer {
  file: string;
  line: number;
  anchor: string;
}

const POINTER = /runbook\.md#([A-Za-z0-9_-]*)/g;

/** Finds every runbook pointer in one file's text. An empty anchor is reported as "". */
export function pointersIn(file: string, text: string): Pointer[] {
  const found: Pointer[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    for (const match of lines[i].matchAll(POINTER)) {
      found.push({ file, line: i + 1, anchor: match[1] });
    }
  }
  return found;
}

/** The anchors of the level-2 headings of a runbook. */
export function anchorsOf(runbook: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of runbook.split("\n")) {
    const heading = /^## ([a-z0-9-]+)\s*$/.exec(line);
    if (heading) anchors.add(heading[1]);
  }
  return anchors;
}

/** Reads every .ts and .tsx file under the given folders, recursively. */
export async function collectPointers(root: string, folders: string[]): Promise<Pointer[]> {
  const found: Pointer[] = [];
  for (const folder of folders) {
    for await (const file of walk(`${root}/${folder}`)) {
      found.push(...pointersIn(file.slice(root.length + 1), await Deno.readTextFile(file)));
    }
  }
  return found;
}

/** What the gate says about a set of pointers and a runbook: each line is one problem. */
export function gateProblems(pointers: Pointer[], runbook: string): string[] {
  if (pointers.length === 0) return ["no runbook pointer found at all: the search is broken"];
  const anchors = anchorsOf(runbook);
  const problems: string[] = [];
  for (const pointer of pointers) {
    if (pointer.anchor === "") {
      problems.push(`${pointer.file}:${pointer.line}: a runbook pointer without a written anchor`);
    } else if (!anchors.has(pointer.anchor)) {
      problems.push(`${pointer.file}:${pointer.line}: runbook.md has no "## ${pointer.anchor}"`);
    }
  }
  return problems;
}

const SKIPPED = new Set(["fixtures", "runbook"]);

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    // fixtures hold damaged data on purpose; tests/runbook holds the gate's own examples.
    if (entry.isDirectory && !SKIPPED.has(entry.name)) yield* walk(path);
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) yield path;
  }
}
