/**
 * A box for the coding agents' end-to-end tests (issue 20), as root: a core on a fresh home whose
 * tasks run as their own users in their sandboxes, a scripted fake model service named in the
 * box's `[models]`, model keys (canaries made at run time) in the vault, and the real `gurt`
 * command on its home. Each agent's own box (claude_box.ts, …) starts its fake and calls this.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
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
  /**
   * `gurt task start --worker AGENT --tools example.echo … PROMPT` (or the tools given), checked:
   * the task's id.
   */
  start(
    prompt: string,
    options?: { hosts?: string; model?: string; tools?: string[] },
  ): Promise<string>;
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
  /** How long `end` waits for a task to end (50 s). */
  endMs?: number;
  /** More of the core's environment (BOX_MODEL, say). */
  env?: Record<string, string>;
  /**
   * The core's own tool registry, as gurt serve has it, with the tools of the apps the test adds
   * (by default the test box's: the example app's tools alone). Its apps are removed at the end.
   */
  apps?: boolean;
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
      core: {
        asRoot: true,
        vault: { value: (n) => vault[n], names: () => Object.keys(vault) },
        ...(setup.apps === true ? { registry: undefined } : {}),
      },
      toml: setup.toml,
      grants: setup.grants,
      env: setup.env,
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
          (options.tools ?? ["example.echo"]).join(","),
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
        const { task, log } = await taskEnd(opened, id, setup.endMs ?? 50_000);
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
      // An app's user (box-app-<name>) outlives the home unless its app is removed.
      for (const app of ((await box.admin("GET", "/apps")).body.apps ?? []) as Json[]) {
        await box.admin("DELETE", `/apps/${app.name}`);
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

/** The files under `folder` (or each of the folders) holding `text` (grep -rlF), one a line; "" when none. */
export async function filesHolding(folder: string | string[], text: string): Promise<string> {
  const grep = await new Deno.Command("grep", {
    args: ["-rlF", "--", text, ...(typeof folder === "string" ? [folder] : folder)],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(grep.stdout);
}

/**
 * Runs `work` on a box for `agent` with `fake` (an Anthropic Messages fake, already started) as
 * `[models] anthropic_base_url` and a canary ANTHROPIC_API_KEY (made at run time, so that no file
 * the task can see holds it) in the vault; the fake is closed afterwards.
 */
export async function withAnthropicFakeBox<Fake extends { url: string; close(): Promise<void> }>(
  agent: AgentName,
  fake: Fake,
  setup: {
    grants: Record<string, string>;
    toml?: string;
    key?: string;
    env?: Record<string, string>;
    apps?: boolean;
  },
  work: (box: AgentBox & { fake: Fake; key: string }) => Promise<void>,
): Promise<void> {
  const key = setup.key ?? `sk-ant-canary-${crypto.randomUUID().slice(0, 12)}`;
  try {
    await withAgentBox({
      agent,
      grants: setup.grants,
      vault: { ANTHROPIC_API_KEY: key },
      toml: `[models]\nanthropic_base_url = "${fake.url}"\n${setup.toml ?? ""}`,
      env: setup.env,
      apps: setup.apps,
    }, (box) => work({ ...box, fake, key }));
  } finally {
    await fake.close();
  }
}

/**
 * The main test's checks of a task that called example.echo once and ended done: the call went
 * through the broker (a Decision in the audit log, one tool.result in the journal), the session is
 * the first step (`session` matches all of it), the final answer the last (holding `said`), the
 * model's cost shows in gurt task show, and the audit log verifies.
 */
export async function assertBrokeredAndCosted(
  agent: AgentBox,
  run: { id: string; task: Json; journal: Json[] },
  expect: { session: RegExp; said: string },
): Promise<void> {
  const records = await agent.box.records();
  assert(
    records.some((r) => r.event?.type === "decision" && r.event.tool === "example.echo"),
    JSON.stringify(records.map((r) => r.event?.type)),
  );
  const calls = run.journal.filter((line) =>
    line.type === "tool.result" && line.tool === "example.echo"
  );
  assertEquals(calls.length, 1, JSON.stringify(run.journal));

  const steps = stepTexts(run.journal);
  assert(expect.session.test(steps[0]), steps.join("\n"));
  assertStringIncludes(steps.at(-1) ?? "", "FINAL: ");
  assertStringIncludes(steps.at(-1) ?? "", expect.said);

  const shown = await agent.cli(["task", "show", run.id]);
  assertEquals(shown.code, 0, shown.stderr);
  assertStringIncludes(shown.stdout, "cost ");
  assertStringIncludes(shown.stdout, expect.said);
  assert(run.task.spentCents > 0, JSON.stringify(run.task));
  const verified = await agent.cli(["audit", "verify"]);
  assertEquals(verified.code, 0, verified.stdout + verified.stderr);
}

/**
 * Starts a task that looks around with keyProbe(key) (its fake runs the probe through the agent's
 * own shell tool) and checks that the vault's key is nowhere in it: the probe read every task
 * process's environment (agent-run, the agent, gurt mcp and the shell at least, each with the
 * placeholder) and found the key in none, nor in a file of its home or /tmp; nor is it anywhere in
 * the task's folder on the host afterwards (its home, its log, its journal), nor in its log.
 */
export async function assertKeyNotInTask(
  agent: AgentBox,
  key: string,
  options: { model?: string } = {},
): Promise<{ id: string; journal: Json[] }> {
  const id = await agent.start("Look around the task.", options);
  const { task, log, journal } = await agent.end(id);
  assertEquals(task.state, "done", log);
  const answer = stepTexts(journal).at(-1) ?? "";
  const counts = probeCounts(answer);
  assert(counts !== null, answer);
  assert(counts.environs >= 4 && counts.placeholder >= 4, answer);
  assertEquals([counts.inEnviron, counts.inFiles], [0, 0], answer);
  assertEquals(await filesHolding(`${agent.box.home}/tasks/${id}`, key), "");
  assert(!log.includes(key));
  return { id, journal };
}

/** A shell command that fetches a host off every test task's list, then prints curl's exit. */
export const BLOCKED_CURL =
  "curl -sS -m 20 -o /dev/null https://blocked.example.com/ 2>&1; echo curl-exit=$?";

/**
 * Starts a task allowed only allowed.example.com whose fake has the agent's shell run
 * BLOCKED_CURL, and checks that it ended done with curl failed.
 */
export async function runBlockedCurl(
  agent: AgentBox,
  options: { model?: string } = {},
): Promise<{ id: string; journal: Json[] }> {
  const id = await agent.start("Fetch a page.", { hosts: "allowed.example.com", ...options });
  const { task, log, journal } = await agent.end(id);
  assertEquals(task.state, "done", log);
  const answer = stepTexts(journal).at(-1) ?? "";
  assertStringIncludes(answer, "curl-exit=");
  assert(!answer.includes("curl-exit=0"), answer);
  return { id, journal };
}

/** runBlockedCurl, and the attempt shows as net.blocked in the journal and the audit log. */
export async function assertShellBlocked(agent: AgentBox): Promise<void> {
  const { id, journal } = await runBlockedCurl(agent);
  const blocked = journal.filter((line) => line.type === "event" && line.event === "net.blocked");
  assert(
    blocked.some((line) => JSON.stringify(line.detail).includes("blocked.example.com")),
    JSON.stringify(journal),
  );
  const records = await agent.box.records();
  assert(
    records.some((r) =>
      r.event?.type === "net_blocked" && r.event.task === id &&
      r.event.host === "blocked.example.com"
    ),
    JSON.stringify(records.map((r) => r.event)),
  );
}

/** The config of the ask tests: a short wait, so that the first call answers pending. */
export const ASK_TOML = "[approvals]\nwait_ms = 3000\n";

/**
 * The ask round trip, on a box with an ask grant for example.echo and ASK_TOML, whose fake calls
 * it again while it is pending: the call shows in gurt approvals, the agent is sent the pending
 * text (in one of `sent()`, what the model was sent), and the owner's `answer` is given. Approved,
 * the retried call runs once and its result is ok; refused, every result is the refusal, the final
 * answer says so, and the tool never runs. The task ends done either way. Its final answer, for
 * the agent's own check of an approved one.
 */
export async function askRoundTrip(
  agent: AgentBox,
  answer: "approve" | "refuse",
  sent: () => string[],
): Promise<{ id: string; final: string; journal: Json[] }> {
  const id = await agent.start("Say hi, with the owner's leave.");
  const approval = await pendingIn(agent.cli, id);
  await until(
    () => Promise.resolve(sent().some((text) => text.includes("Call this tool again to check."))),
    40_000,
  );
  const done = await agent.cli([answer, String(approval)]);
  assertEquals(done.code, 0, done.stderr);
  const { task, log, journal } = await agent.end(id);
  const final = stepTexts(journal).at(-1) ?? "";
  const results = journal.filter((line) =>
    line.type === "tool.result" && line.tool === "example.echo"
  );
  assertEquals(task.state, "done", log);
  if (answer === "approve") {
    assertEquals(results.length, 1, JSON.stringify(journal));
    assertEquals(results[0].answer.ok, true);
  } else {
    assertStringIncludes(final, "FINAL: Denied: the owner refused this call.");
    assert(results.every((line) => line.answer.ok === false), JSON.stringify(results));
  }
  const records = await agent.box.records();
  const ran = records.filter((r) =>
    r.event?.type === "result" && r.event.call.startsWith("mcp.example.echo.")
  );
  assertEquals(
    ran.length,
    answer === "approve" ? 1 : 0,
    JSON.stringify(records.map((r) => r.event)),
  );
  return { id, final, journal };
}

/**
 * A task caught by a gurt serve restart, on a box with an ask grant for example.echo: the agent
 * waits in its call for the owner, the core stops and starts again, and once the call is approved
 * the task ends done with "hi from <name>"; one session (`<name> session <id>`) was kept and the
 * second run resumed it, and what the model was sent after the restart (`sent()`) holds the task's
 * prompt and `restarted`, the text that tells it so.
 */
export async function assertRestartResumes(
  agent: AgentBox,
  name: AgentName,
  sent: () => string[],
  restarted = "gurt restarted this task",
): Promise<void> {
  const id = await agent.start("Say hi, across a restart.");
  await pendingIn(agent.cli, id);
  // The restart comes once the session is kept: an agent that prints its session id only as its
  // output goes (OpenCode, with its first event) may not have yet when its call is pending.
  await until(async () => {
    const journal = (await agent.box.admin("GET", `/tasks/${id}`)).body.journal as Json[];
    return stepTexts(journal).some((text) => text.startsWith(`${name} session `));
  }, 40_000);
  const before = sent().length;
  await agent.box.restart();
  const approval = await pendingIn(agent.cli, id);
  const approved = await agent.cli(["approve", String(approval)]);
  assertEquals(approved.code, 0, approved.stderr);
  const { task, log, journal } = await agent.end(id);
  assertEquals(task.state, "done", log);
  assertStringIncludes(stepTexts(journal).at(-1) ?? "", `hi from ${name}`);
  const sessions = stepTexts(journal).filter((text) => text.startsWith(`${name} session `));
  assertEquals(sessions.length, 1, stepTexts(journal).join("\n"));
  assertStringIncludes(log, `session ${sessions[0].slice(`${name} session `.length)} (resumed)`);
  const after = sent().slice(before);
  assert(
    after.some((text) => text.includes("Say hi, across a restart.") && text.includes(restarted)),
    after.join("\n"),
  );
}
