/**
 * `gurt agent-run AGENT`, in the worker role inside its task's sandbox: runs a coding agent as the
 * task's worker. It reads the task (GET /task: the prompt, the worker, the steps kept so far),
 * writes the agent's settings into the task's home (never through a link), runs the agent's binary
 * with the adapter's command line (stdin /dev/null; its stdout copied to the worker's log line by
 * line, its stderr straight there), keeps the agent's session as a step as soon as it is known,
 * and at the end keeps the final answer as a step and exits with the agent's status, which is the
 * task's end: done or failed.
 */
import { z } from "zod";
import { requestJson } from "../net/mod.ts";
import type { AgentContext, AgentName } from "./adapter.ts";
import { writeAgentFiles } from "./agent_run_files.ts";
import { type AgentStep, exitStatus, finalStep, keptRun, sessionStep } from "./agent_run_steps.ts";
import { adapterOf } from "./registry.ts";

/** What the launcher (`gurt agent-run`, with the task's environment) gives the role. */
export interface AgentRunArgs {
  agent: AgentName;
  /** BOX_SOCKET. */
  socket: string;
  /** HOME: the task's home, where the agent's settings go and where it runs. */
  home: string;
  /** The task user's uid, which owns the home and each folder the settings go in. */
  uid: number;
  /** The agent's binary (agentBinary), the one program the role may run. */
  binary: string;
  mcp: AgentContext["mcp"];
  endpoint: AgentContext["endpoint"];
  mcpWaitMs: number;
  /** Which model services the vault holds a key for, as far as the task is told. */
  services?: AgentContext["services"];
  /** BOX_WORKDIR: the task's first workdir (mod/workdir), where the agent runs instead. */
  workdir?: string;
}

/** GET /task's answer, as far as agent-run reads it. */
const taskAnswer = z.object({
  task: z.object({
    prompt: z.string(),
    worker: z.looseObject({ kind: z.string() }),
  }),
  steps: z.array(z.object({ text: z.string(), data: z.unknown() })),
});

/** Linux refuses to start a program with one argument longer than this (MAX_ARG_STRLEN). */
const MAX_ARGUMENT_BYTES = 128 * 1024;
/** The most of the agent's stdout kept for its outcome; older output beyond it is dropped. */
const MAX_KEPT_BYTES = 32 * 1024 * 1024;

/** What GET /model says of a model's provider. */
const modelApi = z.object({
  model: z.string(),
  api: z.enum(["anthropic", "openai-responses", "openai-chat"]),
}).nullable().catch(null);

/**
 * GET /model's model (the box's for a task that names none; null if the socket does not say) and
 * the API of the provider that serves the task's model (AgentContext.modelApi).
 */
async function boxModel(
  socket: string,
): Promise<{ model: string | null; api: AgentContext["modelApi"] }> {
  const answer = await requestJson(socket, { method: "GET", path: "/model" });
  const body = answer.body as { model?: unknown; provider?: unknown } | null;
  const model = body?.model;
  const named = answer.status === 200 && typeof model === "string" && model !== "" ? model : null;
  return { model: named, api: answer.status === 200 ? modelApi.parse(body?.provider) : null };
}

/** Runs the agent to its end; the agent's exit status. */
export default async function main(args: AgentRunArgs): Promise<number> {
  const adapter = adapterOf(args.agent);
  const answer = await requestJson(args.socket, { method: "GET", path: "/task" });
  if (answer.status !== 200) {
    throw new Error(`gurt agent-run: GET /task answered ${answer.status}`);
  }
  const { task, steps } = taskAnswer.parse(answer.body);
  const worker = task.worker as { kind: string; agent?: unknown; model?: unknown };
  if (worker.kind !== "agent" || worker.agent !== args.agent) {
    throw new Error(
      `gurt agent-run ${args.agent}: the task's worker is ${
        JSON.stringify(worker)
      }, not this agent`,
    );
  }
  const kept = keptRun(steps, args.agent);
  if (kept.final !== null) {
    // The agent answered before the restart: that answer is the task's end.
    log(`${args.agent} already gave its final answer (status ${kept.final.code})`);
    return exitStatus({ session: kept.session, answer: null, ok: kept.final.ok }, kept.final.code);
  }
  const box = await boxModel(args.socket);
  const context: AgentContext = {
    prompt: task.prompt,
    model: typeof worker.model === "string" ? worker.model : null,
    boxModel: box.model,
    modelApi: box.api,
    home: args.home,
    mcp: args.mcp,
    endpoint: args.endpoint,
    mcpWaitMs: args.mcpWaitMs,
    services: args.services,
  };
  await writeAgentFiles(args.home, adapter.files(context), { uid: args.uid });

  let session: { id: string; resume: boolean } | null = null;
  if (kept.session !== null) session = { id: kept.session, resume: true };
  else if (adapter.choosesSession) session = { id: crypto.randomUUID(), resume: false };
  let recorded = kept.session;
  const record = async (id: string) => {
    if (id === recorded) return;
    recorded = id;
    await step(args.socket, sessionStep(args.agent, id));
  };
  if (session !== null) await record(session.id);

  const command = adapter.command(context, session);
  for (const arg of command.args) {
    if (new TextEncoder().encode(arg).length >= MAX_ARGUMENT_BYTES) {
      throw new Error(
        `gurt agent-run ${args.agent}: an argument of the agent's command line (the prompt?) is ${
          new TextEncoder().encode(arg).length
        } bytes, more than Linux passes to a program (${MAX_ARGUMENT_BYTES}); give the task a shorter prompt`,
      );
    }
  }
  const { name, version } = adapter.package;
  log(
    `running ${name}@${version}` +
      (session === null ? "" : `, session ${session.id}${session.resume ? " (resumed)" : ""}`),
  );
  const child = new Deno.Command(args.binary, {
    args: command.args,
    env: command.env,
    cwd: args.workdir ?? args.home,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let sessionWrites = Promise.resolve();
  const stdout = await readLines(child.stdout, (line) => {
    console.log(line);
    const named = adapter.sessionIn(line);
    if (named !== null) sessionWrites = sessionWrites.then(() => record(named));
  });
  const status = await child.status;
  await sessionWrites;
  if (status.signal !== null) {
    // Stopped (the task stopped, gurt serve stopping) or crashed: no end of its work to keep, so
    // a restart resumes the session.
    log(`${args.agent} was ended by ${status.signal}`);
    return 128 + signalNumber(status.signal);
  }
  const code = status.code;
  const outcome = adapter.outcome(stdout, code);
  if (outcome.session !== null) await record(outcome.session);
  await step(args.socket, finalStep(args.agent, { outcome, session: recorded, code }));
  log(`${args.agent} exited with status ${code}${outcome.ok ? "" : " without finishing its work"}`);
  return exitStatus(outcome, code);
}

/** One line on stderr, which is the task's worker log. */
function log(line: string): void {
  console.error(`gurt agent-run: ${line}`);
}

/** Keeps a step in the task's journal. */
async function step(socket: string, step: AgentStep): Promise<void> {
  const answer = await requestJson(socket, { method: "POST", path: "/step", body: step });
  if (answer.status !== 200) {
    throw new Error(
      `gurt agent-run: POST /step answered ${answer.status}: ${JSON.stringify(answer.body)}`,
    );
  }
}

/**
 * Reads `stream` to its end, calling `each` with every line as it comes (without its newline);
 * returns the text read, its last MAX_KEPT_BYTES at most.
 */
async function readLines(
  stream: ReadableStream<Uint8Array>,
  each: (line: string) => void,
): Promise<string> {
  let kept = "";
  let partial = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    kept += text;
    if (kept.length > MAX_KEPT_BYTES) kept = kept.slice(kept.length - MAX_KEPT_BYTES);
    partial += text;
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) each(line);
  }
  if (partial !== "") each(partial);
  return kept;
}

const SIGNALS: Partial<Record<Deno.Signal, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
};

function signalNumber(signal: Deno.Signal): number {
  return SIGNALS[signal] ?? 0;
}
