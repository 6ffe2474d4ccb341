/**
 * A box for the coding agents' end-to-end tests (issue 20), as root: a core on a fresh home whose
 * tasks run as their own users in their sandboxes, a scripted fake model service named in the
 * box's `[models]`, model keys (canaries made at run time) in the vault, and the real `gurt`
 * command on its home. Each agent's own box (claude_box.ts, …) starts its fake and calls this.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  gurt,
  type GurtRun,
  type Json,
  startBox,
  taskEnd,
  type TestBox,
  until,
} from "../kit/mod.ts";
import { adapterOf, agentBinary, type AgentName } from "../../mod/agents/mod.ts";

/** Why an agent's tests cannot run here, else null. */
export function agentSkip(
  agent: AgentName,
  install = "./install.sh --test installs it",
): string | null {
  if (Deno.uid() !== 0) return "they run tasks as their own users: run them as root";
  const binary = agentBinary(adapterOf(agent));
  try {
    Deno.statSync(binary);
  } catch {
    return `no ${agent} at ${binary}: ${install}`;
  }
  return null;
}

/** What a test gets. */
export interface AgentBox {
  box: TestBox;
  /** `gurt --home HOME ARGS`. */
  cli(args: string[]): Promise<GurtRun>;
  /** `gurt task start --worker AGENT --tools example.echo … PROMPT`, checked: the task's id. */
  start(prompt: string, options?: { hosts?: string; model?: string }): Promise<string>;
  /** Waits for the task to end: its record, its worker's log, its journal. */
  end(id: string): Promise<{ task: Json; log: string; journal: Json[] }>;
}

/** What the box is made of. */
export interface AgentBoxSetup {
  agent: AgentName;
  grants: Record<string, string>;
  /** The vault: name to value. */
  vault: Record<string, string>;
  /** The box's gurt.toml, its `[models]` naming the fake. */
  toml: string;
}

/** Runs `work` on a box for `setup.agent`, closed afterwards (its running tasks stopped first). */
export async function withAgentBox(
  setup: AgentBoxSetup,
  work: (agent: AgentBox) => Promise<void>,
): Promise<void> {
  const vault = setup.vault;
  let box: TestBox | null = null;
  try {
    box = await startBox({
      core: { asRoot: true, vault: { value: (n) => vault[n], names: () => Object.keys(vault) } },
      toml: setup.toml,
      grants: setup.grants,
    });
    const home = box.home;
    const opened = box;
    const cli = (args: string[]) => gurt(["--home", home, ...args]);
    await work({
      box: opened,
      cli,
      async start(prompt, options = {}) {
        const hosts = options.hosts === undefined ? [] : ["--hosts", options.hosts];
        const model = options.model === undefined ? [] : ["--model", options.model];
        const started = await cli([
          "task",
          "start",
          "--worker",
          setup.agent,
          "--tools",
          "example.echo",
          ...hosts,
          ...model,
          prompt,
        ]);
        assertEquals(started.code, 0, started.stderr);
        const id = started.stdout.trim().split("\n").at(-1) ?? "";
        assert(/^[a-z0-9]+$/.test(id), `gurt task start printed ${started.stdout}`);
        return id;
      },
      async end(id) {
        const { task, log } = await taskEnd(opened, id, 50_000);
        const journal = (await opened.admin("GET", `/tasks/${id}`)).body.journal as Json[];
        return { task, log, journal };
      },
    });
  } finally {
    if (box !== null) {
      for (const task of (await box.admin("GET", "/tasks")).body.tasks as Json[]) {
        if (task.state === "running" || task.state === "waiting") {
          await box.admin("POST", `/tasks/${task.id}/stop`);
        }
      }
      await box.close();
    }
  }
}

/** The texts of a journal's steps. */
export function stepTexts(journal: Json[]): string[] {
  return journal.filter((line) => line.type === "step").map((line) => String(line.text));
}

/** Waits for the task's one pending approval of example.echo in `gurt approvals`; its number. */
export async function pendingIn(
  cli: (args: string[]) => Promise<GurtRun>,
  id: string,
): Promise<number> {
  let approval = -1;
  await until(async () => {
    const shown = await cli(["approvals"]);
    // Two lines each: the number, age, expiry and task; then the tool and its arguments.
    const block = new RegExp(`^(\\d+) .*task ${id}.*\\n\\s+example\\.echo `, "m").exec(
      shown.stdout,
    );
    if (block !== null) approval = Number(block[1]);
    return approval !== -1;
  }, 40_000);
  return approval;
}

/**
 * A shell script for the agent's shell tool that reads every task process's environment and
 * greps the task's home and /tmp for `key`, printing
 * `environs=N placeholder=N key-in-environ=N key-in-files=N`. The key is split so that neither
 * the command nor its transcript holds it whole; the placeholder keys found show the reading works.
 */
export function keyProbe(key: string): string {
  const [head, tail] = [key.slice(0, 12), key.slice(12)];
  return `k="$(printf '%s%s' '${head}' '${tail}')"; read=0; found=0; placeholder=0
for f in /proc/[0-9]*/environ; do
  e="$(tr '\\0' '\\n' < "$f" 2>/dev/null)" || continue
  read=$((read+1))
  printf '%s\\n' "$e" | grep -qF -- "$k" && found=$((found+1))
  printf '%s\\n' "$e" | grep -q 'API_KEY=gurt-placeholder' && placeholder=$((placeholder+1))
done
files=$(grep -rlF -- "$k" "$HOME" /tmp 2>/dev/null | wc -l)
echo "environs=$read placeholder=$placeholder key-in-environ=$found key-in-files=$files"`;
}

/** keyProbe's counts in an answer, else null. */
export function probeCounts(
  answer: string,
): { environs: number; placeholder: number; inEnviron: number; inFiles: number } | null {
  const counts = /environs=(\d+) placeholder=(\d+) key-in-environ=(\d+) key-in-files=(\d+)/
    .exec(answer);
  if (counts === null) return null;
  const [environs, placeholder, inEnviron, inFiles] = counts.slice(1).map(Number);
  return { environs, placeholder, inEnviron, inFiles };
}

/** The files under `folder` holding `text` (grep -rlF), one a line; "" when none. */
export async function filesHolding(folder: string, text: string): Promise<string> {
  const grep = await new Deno.Command("grep", {
    args: ["-rlF", "--", text, folder],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(grep.stdout);
}
