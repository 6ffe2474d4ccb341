/**
 * The floor of any exec over HTTP here, for bench/guest_bench.ts: a bare Deno.serve that starts
 * each command in its own session through the same session helper as `gurt guest` and reads both
 * of its pipes to the end, and does nothing else (no auth, validation, jail, caps, timeout,
 * registry). Prints `{"exec": URL}`; POST /shutdown ends it.
 */
import { installSessionHelper } from "../mod/exec-guest/mod.ts";

const helper = await installSessionHelper();
const setsid = helper?.path ?? null;
if (helper === null || setsid === null) throw new Error("the session helper does not run here");

async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  const reader = stream.getReader({ mode: "byob" });
  let scratch = new ArrayBuffer(4096);
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read(new Uint8Array(scratch));
    if (done || value === undefined) return length;
    length += value.byteLength;
    scratch = value.buffer as ArrayBuffer;
  }
}

const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  async (request) => {
    if (new URL(request.url).pathname === "/shutdown") {
      setTimeout(async () => {
        await server.shutdown();
        await helper.remove();
      }, 0);
      return new Response(null, { status: 204 });
    }
    const { command } = await request.json() as { command: string[] };
    const child = new Deno.Command(setsid, {
      args: command,
      // The environment the guest gives a command: its own (LANG included, which `true` acts on).
      clearEnv: true,
      env: Deno.env.toObject(),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const [stdout, stderr, status] = await Promise.all([
      drain(child.stdout),
      drain(child.stderr),
      child.status,
    ]);
    return Response.json({ exit_code: status.code, stdout, stderr });
  },
);
console.log(JSON.stringify({ exec: `http://127.0.0.1:${server.addr.port}` }));
