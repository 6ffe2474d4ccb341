/** `gurt task start|list|show|stop`: the owner's view of tasks. */
import type { Command } from "commander";
import type { StartTaskInput } from "../admin/mod.ts";
import { AGENT_NAMES, type AgentName } from "../agents/mod.ts";
import { adminSocketPath, type Config, hostEntryProblem } from "../config/mod.ts";
import type { TaskArgs, WatchArgs } from "../owner/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

interface StartOptions {
  worker: string;
  script?: string;
  tools?: string;
  budget?: string;
  model?: string;
  hosts?: string;
  workdir?: string[];
  credentials?: string;
}

/** Registers `gurt task`. */
export function registerTaskCommands(program: Command): void {
  const task = program.command("task").description("start, list, show and stop tasks");
  task
    .command("start")
    .argument("[prompt]", "what the task is for")
    .option(
      "--worker <kind>",
      "test (a script of broker requests), loop (a model's turn loop), claude, codex, droid or opencode (that coding agent), cmd (-- COMMAND…) or none",
      "test",
    )
    .option("--script <file>", "the test worker's script: METHOD PATH [JSON] per line")
    .option("--tools <names>", "the task's tools, comma-separated", "example.echo")
    .option("--budget <cents>", "the most the task may spend without asking, in US cents")
    .option(
      "--model <name>",
      "the model of a loop or agent worker (default: for the loop and Droid the box's, BOX_MODEL in gurt serve's environment else gurt.toml [models] model; for Claude Code, Codex and OpenCode their own)",
    )
    .option(
      "--hosts <list>",
      "hosts the task may reach through its egress proxy, comma-separated: a.example, *.npmjs.org, b.example:8443",
    )
    .option(
      "--workdir <path>",
      "a folder of yours the task works in, at its own path (its working directory); PATH:ro for read-only; repeatable; a task.workdir grant must allow it",
      (value: string, before: string[] = []) => [...before, value],
    )
    .option(
      "--credentials <ids>",
      "credential rules of yours (credentials/ID.toml) whose placeholders the task gets, comma-separated; each request carrying one is decided as an http.request call (docs/credentials.md)",
    )
    .description("start a task and print its id")
    .action((prompt: string | undefined, options: StartOptions, command: Command) =>
      run(command, async (config) => {
        // The test worker is the default: without --script, the owner may not know of the others.
        const chosen = command.getOptionValueSource("worker") !== "default";
        return { action: "start", body: await startBody(prompt, options, { config, chosen }) };
      })
    );
  task.command("list").description("list tasks with state and spending")
    .action((_o, command: Command) => run(command, () => Promise.resolve({ action: "list" })));
  task.command("show").argument("<id>").description("show a task and its journal")
    .action((id: string, _o, command: Command) =>
      run(command, () => Promise.resolve({ action: "show", id }))
    );
  task.command("watch").argument("<id>")
    .option("--say", "show approval blocks without asking; answer with gurt approve")
    .option("--json", "print the journal's lines as JSON and nothing else")
    .description("follow a task as it runs, and answer its approvals")
    .action((id: string, options: { say?: boolean; json?: boolean }, command: Command) =>
      exitWith(() => {
        const config = configFor(command);
        const mode = options.json ? "json" : options.say ? "say" : "ask";
        const args: WatchArgs = { socket: adminSocketPath(config.home), id, mode };
        return launchRole(ROLE_TABLE["task watch"], { places: { config }, args });
      })
    );
  task.command("stop").argument("<id>").description("stop a task: its worker, socket, approvals")
    .action((id: string, _o, command: Command) =>
      run(command, () => Promise.resolve({ action: "stop", id }))
    );
}

type Action = { action: "start"; body: StartTaskInput } | { action: "list" } | {
  action: "show";
  id: string;
} | { action: "stop"; id: string };

function run(command: Command, action: (config: Config) => Promise<Action>): Promise<never> {
  return exitWith(async () => {
    const config = configFor(command);
    const args = { socket: adminSocketPath(config.home), ...(await action(config)) } as TaskArgs;
    return launchRole(ROLE_TABLE.task, { places: { config }, args });
  });
}

/**
 * The arguments the command line parser reads: where the worker chosen before a `--` (the last
 * `--worker` given) is cmd, those before it (what follows is the worker's command); otherwise all
 * of them, so that `--` still marks the end of options, as for a prompt that begins with "-".
 */
export function beforeCommand(args: readonly string[]): string[] {
  const dash = args.indexOf("--");
  if (dash === -1) return [...args];
  const head = args.slice(0, dash);
  // The worker the parser will take: the last --worker given.
  let worker: string | undefined;
  head.forEach((arg, i) => {
    if (arg === "--worker") worker = head[i + 1];
    else if (arg.startsWith("--worker=")) worker = arg.slice("--worker=".length);
  });
  return worker === "cmd" ? head : [...args];
}

/** The worker's command: what follows the first `--`. */
function afterCommand(args: readonly string[]): string[] {
  const dash = args.indexOf("--");
  return dash === -1 ? [] : args.slice(dash + 1);
}

/**
 * The sentence for a start without a worker that can run: every worker and what each needs. `chosen`
 * says whether the owner asked for the test worker or got it as the default.
 */
function workerChoices(config: Config, chosen: boolean): string {
  const key = `the vault key of its model's service: gurt vault set ANTHROPIC_API_KEY for ` +
    `claude-* models, gurt vault set OPENAI_API_KEY for others ([models] model is ` +
    `${config.models.model})`;
  const lead = chosen
    ? "--worker test needs --script FILE"
    : "a task needs a worker, and the default, --worker test, needs --script FILE";
  return `${lead}; ` +
    `choose one of --worker loop (a model works on the prompt; needs ${key}), ` +
    `--worker claude, codex, droid or opencode (that coding agent works on the prompt; ./install.sh installs them), ` +
    `--worker cmd [PROMPT] -- COMMAND… (a program of yours runs as the task), ` +
    `--worker test --script FILE (a file of broker requests, METHOD PATH [JSON] per line) or ` +
    `--worker none (nothing runs; you speak to the task's socket yourself)`;
}

async function startBody(
  prompt: string | undefined,
  options: StartOptions,
  context: { config: Config; chosen: boolean },
): Promise<StartTaskInput> {
  let worker: StartTaskInput["worker"];
  if (options.worker === "test") {
    if (options.script === undefined) {
      throw new Error(workerChoices(context.config, context.chosen));
    }
    const script = options.script;
    const scriptText = await Deno.readTextFile(script).catch((error) => {
      const why = error instanceof Deno.errors.NotFound
        ? "it does not exist"
        : error instanceof Deno.errors.PermissionDenied
        ? "this user may not read it"
        : error instanceof Error
        ? error.message
        : String(error);
      throw new Error(`--script ${JSON.stringify(script)} cannot be read: ${why}`);
    });
    worker = { kind: "test", scriptText };
  } else if (options.worker === "cmd") {
    const command = afterCommand(Deno.args);
    if (command.length === 0) throw new Error("--worker cmd needs the command after --");
    worker = { kind: "cmd", command };
  } else if (options.worker === "loop") {
    worker = { kind: "loop", model: options.model ?? null };
  } else if ((AGENT_NAMES as readonly string[]).includes(options.worker)) {
    worker = { kind: "agent", agent: options.worker as AgentName, model: options.model ?? null };
  } else if (options.worker === "none") {
    worker = { kind: "none" };
  } else {
    throw new Error(
      `--worker must be test, loop, ${AGENT_NAMES.join(", ")}, cmd or none, not ${
        JSON.stringify(options.worker)
      }`,
    );
  }
  let budgetCents: number | null = null;
  if (options.budget !== undefined) {
    if (!/^(0|[1-9][0-9]{0,12})$/.test(options.budget)) {
      throw new Error(`--budget must be a whole number of cents, not ${options.budget}`);
    }
    budgetCents = Number(options.budget);
  }
  const tools = (options.tools ?? "").split(",").map((t) => t.trim()).filter((t) => t !== "");
  const hosts = (options.hosts ?? "").split(",").map((h) => h.trim()).filter((h) => h !== "");
  for (const host of hosts) {
    const problem = hostEntryProblem(host);
    if (problem !== null) throw new Error(`--hosts: ${JSON.stringify(host)} ${problem}`);
  }
  const workdirs = (options.workdir ?? []).map((value) => {
    const readOnly = value.endsWith(":ro");
    return { path: readOnly ? value.slice(0, -3) : value, readOnly };
  });
  const credentials = (options.credentials ?? "").split(",").map((c) => c.trim()).filter((c) =>
    c !== ""
  );
  return { prompt: prompt ?? "", worker, tools, budgetCents, hosts, workdirs, credentials };
}
