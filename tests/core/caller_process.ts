/**
 * A worker stand-in run as its own process by the concurrency test: `CALLS` calls on a task
 * socket, one after another, alternating two tools; prints how many were answered ok.
 * Arguments: SOCKET PREFIX CALLS.
 */
import { rawJson } from "../kit/mod.ts";

const [socket, prefix, calls] = Deno.args;
let ok = 0;
const failures: string[] = [];
for (let i = 0; i < Number(calls); i++) {
  const tool = i % 2 === 0 ? "example.echo" : "example.note";
  const answer = await rawJson(socket, {
    method: "POST",
    path: "/call",
    body: { tool, input: { text: `${prefix}-${i}` }, key: `${prefix}-${i}` },
  });
  if (answer.status === 200 && answer.body.ok === true) ok++;
  else failures.push(answer.text);
}
console.log(JSON.stringify({ ok, failures: failures.slice(0, 3) }));
