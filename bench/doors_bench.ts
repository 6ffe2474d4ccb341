/**
 * The guarded doors' own cost (mod/net/guarded_server.ts: the core's accept loop, node:http's
 * parser and the fetch bridge) against Deno.serve, in the same run and the same process, on
 * loopback TCP with one kept-alive connection as a task's client keeps one: requests/s of a GET
 * answered with a small JSON body, of a POST with a 200-byte JSON body read whole, of 8
 * connections at once, and MB/s of a 64 MiB answer streamed in 64 KiB chunks. The target is the
 * ratio to Deno.serve's figure; the handler is the same function for both.
 */
import { serveGuarded } from "../mod/net/mod.ts";
import { Http1Client } from "./http1_client.ts";
import { type BenchRow, printTable } from "./table.ts";
import { rate } from "./measure.ts";

const STREAM_BYTES = 64 * 1024 * 1024;
const CHUNK = new Uint8Array(64 * 1024);
const PARALLEL = 8;
const ROUNDS = 3;

async function handler(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (path === "/stream") {
    let sent = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= STREAM_BYTES) return controller.close();
          controller.enqueue(CHUNK);
          sent += CHUNK.byteLength;
        },
      }),
    );
  }
  const body = request.method === "POST" ? await request.json() : null;
  return Response.json({ ok: true, got: body === null ? 0 : Object.keys(body).length });
}

interface Door {
  url: string;
  stop(): Promise<void>;
}

function denoServe(): Door {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  const addr = server.addr as Deno.NetAddr;
  return { url: `http://127.0.0.1:${addr.port}`, stop: () => server.shutdown() };
}

function guarded(): Door {
  const server = serveGuarded({ hostname: "127.0.0.1", port: 0 }, handler, { name: "bench door" });
  const addr = server.addr as Deno.NetAddr;
  return { url: `http://127.0.0.1:${addr.port}`, stop: () => server.close() };
}

const postBody = JSON.stringify({
  tool: "example.echo",
  args: { text: "x".repeat(120) },
  key: crypto.randomUUID(),
});

async function sequential(door: Door, method: "GET" | "POST"): Promise<number> {
  const client = await Http1Client.connect(door.url);
  try {
    return await rate(async () => {
      const answer = await client.request(
        method,
        "/call",
        method === "POST"
          ? { body: postBody, headers: { "content-type": "application/json" } }
          : {},
      );
      if (answer.status !== 200) throw new Error(`status ${answer.status}`);
    }, { ms: 1500 });
  } finally {
    client.close();
  }
}

async function parallel(door: Door): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: PARALLEL }, () => Http1Client.connect(door.url)),
  );
  try {
    const perClient = await Promise.all(clients.map((client) =>
      rate(async () => {
        const answer = await client.request("POST", "/call", { body: postBody });
        if (answer.status !== 200) throw new Error(`status ${answer.status}`);
      }, { ms: 1500 })
    ));
    return perClient.reduce((sum, one) => sum + one, 0);
  } finally {
    for (const client of clients) client.close();
  }
}

async function stream(door: Door): Promise<number> {
  const start = performance.now();
  const answer = await fetch(`${door.url}/stream`);
  let got = 0;
  for await (const chunk of answer.body!) got += chunk.byteLength;
  if (got !== STREAM_BYTES) throw new Error(`streamed ${got} bytes`);
  return got / 1e6 / ((performance.now() - start) / 1000);
}

type Figures = Record<"get" | "post" | "parallel" | "stream", number[]>;

async function measure(make: () => Door, into: Figures): Promise<void> {
  const door = make();
  try {
    into.get.push(await sequential(door, "GET"));
    into.post.push(await sequential(door, "POST"));
    into.parallel.push(await parallel(door));
    into.stream.push(await stream(door));
  } finally {
    await door.stop();
  }
}

const empty = (): Figures => ({ get: [], post: [], parallel: [], stream: [] });
const base = empty();
const ours = empty();
// Alternated, so that a neighbour's load falls on both alike.
for (let round = 0; round < ROUNDS; round++) {
  await measure(denoServe, base);
  await measure(guarded, ours);
}
const best = (values: number[]) => Math.max(...values);
const rows: BenchRow[] = [
  ["GET, one connection", "get", "req/s", ">= 0.7"],
  ["POST 200 B, one connection", "post", "req/s", ">= 0.7"],
  [`POST 200 B, ${PARALLEL} connections`, "parallel", "req/s", ">= 0.7"],
  ["64 MiB answer streamed", "stream", "MB/s", ">= 0.8"],
].map(([what, key, unit, target]) => ({
  what: `guarded door: ${what}`,
  unit,
  value: best(ours[key as keyof Figures]),
  baselineWhat: "Deno.serve, same handler",
  baseline: best(base[key as keyof Figures]),
  target,
}));
printTable(rows);
