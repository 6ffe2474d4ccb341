/**
 * The test worker (`gurt test-worker --script F`), run in the worker role. It runs one broker request
 * per line, keeps the number of the last line it finished in its step data, and after a restart
 * resumes after that line. A pending answer is asked again until it is answered.
 */
import { requestJson } from "../net/mod.ts";
import { parseScript } from "./test_script.ts";

/** What the worker role is given. */
export interface TestWorkerArgs {
  socket: string;
  task: string;
  script: string;
}

/** Runs the script; 0 when every line has run. */
export default async function main(args: TestWorkerArgs): Promise<number> {
  const lines = parseScript(await Deno.readTextFile(args.script));
  const start = await requestJson(args.socket, { method: "GET", path: "/task" });
  const done = lastFinishedLine(start.body);
  for (const line of lines) {
    if (line.line <= done || line.kind === "nothing") continue;
    if (line.kind === "sleep") {
      await new Promise((resolve) => setTimeout(resolve, line.ms));
    } else if (line.path === "/step" && line.method === "POST") {
      const body = line.body as { text?: string; data?: unknown };
      await send(args.socket, "POST", "/step", {
        text: body.text ?? "",
        data: { line: line.line, given: body.data ?? null },
      });
      continue;
    } else {
      let answer = await send(args.socket, line.method, line.path, line.body);
      while (isPending(answer.body)) {
        answer = await send(args.socket, line.method, line.path, line.body);
      }
      console.log(
        `line ${line.line}: ${line.method} ${line.path} ${answer.status} ${
          JSON.stringify(answer.body)
        }`,
      );
    }
    await send(args.socket, "POST", "/step", {
      text: `line ${line.line} done`,
      data: { line: line.line },
    });
  }
  return 0;
}

async function send(socket: string, method: string, path: string, body: unknown) {
  return await requestJson(socket, { method, path, body });
}

function isPending(body: unknown): boolean {
  return body !== null && typeof body === "object" &&
    (body as { pending?: unknown }).pending === true;
}

/** The highest `data.line` among the task's steps, or 0. */
export function lastFinishedLine(task: unknown): number {
  const steps = (task as { steps?: { data?: { line?: unknown } }[] }).steps ?? [];
  let last = 0;
  for (const step of steps) {
    const line = step.data?.line;
    if (typeof line === "number" && line > last) last = line;
  }
  return last;
}
