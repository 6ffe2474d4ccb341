/**
 * The other processes of bench/model_proxy_bench.ts. `service`: a fake Anthropic Messages service
 * on 127.0.0.1 that answers a streamed request at once with message_start, then (for the model
 * `long`) LONG_MB of content_block_delta events in 16 KiB writes, then message_delta and
 * message_stop; it prints `ready <port>`. `proxy <socket> <port>`: the model endpoint on the Unix
 * socket, relaying to that service with a key; it prints `ready`. `held <socket> <port> <journal>`:
 * the same, holding each request in a real journal first, as the core does; both also relay the
 * model `gateway/<model>` to a provider under a path (`/gateway`), which the service answers alike. `relay <socket> <port>`: a bare
 * relay on the socket (no checks, no key, no meter), the floor of one more hop in Deno; it prints
 * `ready`. SIGTERM ends each.
 */
import { serveModelEndpoint } from "../mod/model-proxy/mod.ts";
import { Journal } from "../mod/broker/mod.ts";

/** The length of the long answer, in MiB. */
export const LONG_MB = 64;

const [mode, ...rest] = Deno.args;

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

if (mode === "service") {
  const encoder = new TextEncoder();
  const start = encoder.encode(sse("message_start", {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [],
      usage: { input_tokens: 20, output_tokens: 1 },
    },
  }));
  const delta = sse("content_block_delta", {
    type: "content_block_delta",
    index: 0,
    delta: { type: "text_delta", text: "a word or two of the model's long answer, " },
  });
  const block = encoder.encode(delta.repeat(Math.floor(16 * 1024 / delta.length)));
  const end = encoder.encode(
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 9000 },
    }) + sse("message_stop", { type: "message_stop" }),
  );
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    const blocks = body.model === "long" ? Math.ceil(LONG_MB * 1024 * 1024 / block.length) : 0;
    let sent = -1;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === -1) controller.enqueue(start);
          else if (sent < blocks) controller.enqueue(block);
          else {
            controller.enqueue(end);
            controller.close();
          }
          sent++;
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  console.log(`ready ${server.addr.port}`);
  Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
} else if (mode === "relay") {
  // The least a relay on the socket does: the request's body read and sent on, and the answer's
  // body handed back as fetch gives it (Deno copies it without JavaScript): one more hop's floor.
  const [socketPath, port] = rest;
  Deno.serve({ path: socketPath, onListen: () => {} }, async (request) => {
    const answer = await fetch(`http://127.0.0.1:${port}${new URL(request.url).pathname}`, {
      method: "POST",
      headers: request.headers,
      body: await request.bytes(),
    });
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  console.log("ready");
  Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
} else if (mode === "proxy" || mode === "held") {
  const [socketPath, port, journalPath] = rest;
  const service = { baseUrl: `http://127.0.0.1:${port}`, key: () => "sk-bench-key" };
  // As the core holds each billed request: a model.hold line in a real journal, synced first.
  const journal = mode === "held" ? await Journal.open(journalPath) : null;
  const time = () => new Date().toISOString();
  let holds = 0;
  await serveModelEndpoint({
    socketPath,
    services: { anthropic: service, openai: service },
    // One of the owner's providers under a path (its model `gateway/…`), as [models.providers].
    providers: [{
      name: "gateway",
      api: "anthropic",
      baseUrl: `http://127.0.0.1:${port}/gateway`,
      keyName: "GATEWAY_KEY",
      key: () => "sk-bench-gateway-key",
      headers: () => ({ headers: { "x-team": "bench" } }),
      models: [],
    }],
    onUsage: () => Promise.resolve(),
    onBlocked: () => Promise.resolve(),
    holds: journal === null ? undefined : {
      open: async ({ service, model, path, cents }) => {
        const hold = `${++holds}`;
        await journal.append({
          type: "model.hold",
          time: time(),
          hold,
          service,
          model,
          path,
          cents,
        });
        return hold;
      },
      close: (hold) => journal.append({ type: "model.settled", time: time(), hold }),
    },
  });
  console.log("ready");
  Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
}
