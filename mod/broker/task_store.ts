/** tasks/<id>/task.json: the task's prompt, worker, tools, budget and state, written atomically. */
import { z } from "zod";
import { taskDir } from "../config/mod.ts";
import { writeFileAtomic } from "../common/mod.ts";
import { AGENT_NAMES } from "../agents/mod.ts";

/** The states of a task; running and waiting are live, the others are ended. */
export const TASK_STATES = ["running", "waiting", "done", "failed", "stopped"] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** How a task's worker is started. */
export const workerSpec = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("test"), script: z.string() }),
  z.strictObject({ kind: z.literal("cmd"), command: z.array(z.string()).min(1) }),
  z.strictObject({ kind: z.literal("none") }),
  /** The model loop (`gurt loop`); `model` overrides gurt.toml's [models] model. */
  z.strictObject({ kind: z.literal("loop"), model: z.string().min(1).max(200).nullable() }),
  /** A coding agent (`gurt agent-run`); `model` is the task's, else the agent's own default. */
  z.strictObject({
    kind: z.literal("agent"),
    agent: z.enum(AGENT_NAMES),
    model: z.string().min(1).max(200).nullable(),
  }),
]);
export type WorkerSpec = z.infer<typeof workerSpec>;

/** A task as task.json holds it. */
export const taskRecord = z.strictObject({
  id: z.string().regex(/^[a-z0-9]{1,24}$/),
  prompt: z.string(),
  worker: workerSpec,
  tools: z.array(z.string()),
  budgetCents: z.number().int().min(0).nullable(),
  state: z.enum(TASK_STATES),
  created: z.string(),
  ended: z.string().nullable(),
  endReason: z.string().nullable(),
  user: z.string().nullable(),
  pid: z.number().int().nullable(),
  /** The task's own egress host list (`gurt task start --hosts`); older tasks have none. */
  hosts: z.array(z.string()).default([]),
  /** The owner's folders mounted in the task (mod/workdir), as their grants allowed them; none if absent. */
  workdirs: z.array(z.strictObject({
    path: z.string(),
    readOnly: z.boolean(),
    mode: z.enum(["auto", "ask"]),
    grant: z.string(),
    includeEnvFiles: z.boolean(),
  })).optional(),
  /**
   * The credential rules the task was given (docs/credentials.md), each with the placeholder the
   * task holds for it; none if absent.
   */
  credentials: z.array(z.strictObject({ rule: z.string(), placeholder: z.string() })).optional(),
});
export type TaskRecord = z.infer<typeof taskRecord>;
/** A task as it may be written: what has a default may be left out. */
export type TaskRecordInput = z.input<typeof taskRecord>;

/** Whether a task in this state still has a socket and a worker. */
export function isLive(state: TaskState): boolean {
  return state === "running" || state === "waiting";
}

/** Reads and checks a task.json. */
export async function readTask(home: string, id: string): Promise<TaskRecord> {
  const text = await Deno.readTextFile(`${taskDir(home, id)}/task.json`);
  return taskRecord.parse(JSON.parse(text));
}

/**
 * Every task folder's task.json, read and checked: `record` is null where it cannot be (the task
 * is then left alone). No tasks folder is no tasks.
 */
export async function readTasks(
  home: string,
): Promise<{ id: string; record: TaskRecord | null }[]> {
  const out: { id: string; record: TaskRecord | null }[] = [];
  try {
    for await (const entry of Deno.readDir(`${home}/tasks`)) {
      if (!entry.isDirectory) continue;
      out.push({ id: entry.name, record: await readTask(home, entry.name).catch(() => null) });
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out;
}

/** Writes a task.json atomically. */
export async function writeTask(home: string, task: TaskRecordInput): Promise<void> {
  await writeFileAtomic(`${taskDir(home, task.id)}/task.json`, JSON.stringify(task, null, 2));
}

/** A new task id: 10 characters of [a-z0-9], short enough for a Linux user `box-<id>`. */
export function newTaskId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  return "t" + [...bytes.slice(1)].map((b) => alphabet[b % alphabet.length]).join("");
}
