/**
 * The floor of a call's structure, for bench/core_bench.ts: a bare Deno.serve on a Unix socket that
 * answers POST /call with the durable writes of gurt's path, in its order and with the audit
 * writer's own write and sync, and does nothing else (no grants, state, decision, journal state,
 * redaction, check or record of content): one line written and its fdatasync awaited (the Decision
 * record), then one line in each of two files, both fdatasyncs awaited at once (the Result record
 * and the journal line). Args: the socket and a folder for the two files. Prints `ready`; SIGTERM
 * ends it.
 */
import { realFileOps } from "../mod/audit/mod.ts";

const [socket, dir] = Deno.args;
const audit = await Deno.open(`${dir}/audit.jsonl`, { append: true, create: true });
const journal = await Deno.open(`${dir}/journal.jsonl`, { append: true, create: true });
const encoder = new TextEncoder();

const server = Deno.serve(
  { path: socket, onListen: () => console.log("ready") },
  async (request) => {
    const call = await request.json() as { tool: string; input: unknown; key: string };
    await realFileOps.write(audit, encoder.encode(`${JSON.stringify({ decision: call })}\n`));
    await realFileOps.syncData(audit);
    const answer = { ok: true, output: call.input };
    await realFileOps.write(audit, encoder.encode(`${JSON.stringify({ result: call.key })}\n`));
    await realFileOps.write(journal, encoder.encode(`${JSON.stringify({ answer })}\n`));
    await Promise.all([realFileOps.syncData(audit), realFileOps.syncData(journal)]);
    return Response.json(answer);
  },
);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  audit.close();
  journal.close();
  Deno.exit(0);
});
