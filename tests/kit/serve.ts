/**
 * A real `gurt serve` as a child process, for the tests that kill it: started on a home, ready once
 * it says its admin socket is ready, stopped with SIGTERM or killed with SIGKILL.
 */
import { adminSocketPath } from "../../mod/config/mod.ts";
import { gurtArgs } from "./gurt.ts";
import type { Json } from "./box.ts";
import { rawJson } from "./raw_http.ts";

/** A running `gurt serve`. */
export interface ServeProcess {
  child: Deno.ChildProcess;
  home: string;
  /** Its exit status if it exited before it was ready; null once ready. */
  exited: Deno.CommandStatus | null;
  /** Everything it printed on stderr so far. */
  stderr(): string;
  admin(method: "GET" | "POST", path: string, body?: unknown): Promise<{
    status: number;
    body: Json;
  }>;
  /** SIGKILL, then waits for it to be gone. */
  kill9(): Promise<void>;
  /** SIGTERM, then its exit status. */
  stop(): Promise<Deno.CommandStatus>;
}

/** Options of startServe. */
export interface ServeOptions {
  /** Extra environment; with `clearEnv` the only environment besides PATH. */
  env?: Record<string, string>;
  clearEnv?: boolean;
  /** Pass `--home HOME` (default true). */
  passHome?: boolean;
  uid?: number;
  gid?: number;
  /** A command the core runs under, such as `["prlimit", "--nofile=300"]`. */
  wrap?: string[];
}

/**
 * Starts `gurt serve --home HOME` and resolves once it printed that its admin socket is ready; if
 * it exits first, resolves with `exited` set so the caller can check the status and stderr.
 */
export async function startServe(
  home: string,
  options: ServeOptions = {},
): Promise<ServeProcess> {
  const args = options.passHome === false ? ["serve"] : ["--home", home, "serve"];
  const wrap = options.wrap ?? [];
  const child = new Deno.Command(wrap.length > 0 ? wrap[0] : Deno.execPath(), {
    args: wrap.length > 0 ? [...wrap.slice(1), Deno.execPath(), ...gurtArgs(args)] : gurtArgs(args),
    env: {
      NO_COLOR: "1",
      ...(options.clearEnv ? { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } : {}),
      ...options.env,
    },
    clearEnv: options.clearEnv ?? false,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid }),
  }).spawn();
  let text = "";
  const ready = Promise.withResolvers<boolean>();
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes("admin socket ready")) ready.resolve(true);
    }
    ready.resolve(false);
  })();
  const status = child.status;
  const isReady = await Promise.race([ready.promise, status.then(() => false)]);
  const admin = adminSocketPath(home);
  const served = {
    child,
    home,
    exited: isReady ? null : await status,
    stderr: () => text,
    admin: (method: "GET" | "POST", path: string, body?: unknown) =>
      rawJson(admin, { method, path, body }),
    async kill9() {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
      await status;
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      return await status;
    },
  };
  return served;
}

/** Starts a task with worker `none` (or the given worker) over the admin socket; its id. */
export async function startTask(
  serve: ServeProcess,
  body: { tools: string[]; worker?: unknown; budgetCents?: number | null },
): Promise<string> {
  const answer = await serve.admin("POST", "/tasks", {
    worker: body.worker ?? { kind: "none" },
    tools: body.tools,
    budgetCents: body.budgetCents ?? null,
  });
  if (answer.status !== 200) throw new Error(`task start failed: ${JSON.stringify(answer.body)}`);
  return answer.body.task.id as string;
}

/** A task's socket in a home. */
export function taskSocket(home: string, task: string): string {
  return `${home}/tasks/${task}/broker.sock`;
}

/** Sends one request to a task socket. */
export function taskRequest(
  home: string,
  task: string,
  request: { method: "GET" | "POST"; path: string; body?: unknown },
): Promise<{ status: number; body: Json }> {
  return rawJson(taskSocket(home, task), request);
}

/** The notes of a task: the keys, in order, of tasks/<id>/notes.txt. */
export async function noteKeys(home: string, task: string): Promise<string[]> {
  const text = await Deno.readTextFile(`${home}/tasks/${task}/notes.txt`).catch(() => "");
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line).key);
}

/** Stops every live task, so that no task user (`box-<id>`, as root) outlives the test. */
export async function stopAllTasks(serve: ServeProcess): Promise<void> {
  const listed = await serve.admin("GET", "/tasks");
  for (const task of listed.body.tasks as { id: string; state: string }[]) {
    if (task.state === "running" || task.state === "waiting") {
      await serve.admin("POST", `/tasks/${task.id}/stop`);
    }
  }
}
