/**
 * An attack review of the box's answer to a task's HTTPS to the model hosts (issue 19), as a task
 * and as another process on the host see it: a CONNECT or SOCKS5 tunnel to api.anthropic.com,
 * api.openai.com or api.factory.ai handed to the TLS front, its requests given to the task's model
 * endpoint, and the front's listeners on the host's 127.0.0.1. Each test names the attack; an attack
 * that worked when this review began says so and why (it has been fixed); an attack that is not
 * fixed yet is marked `ignore: true` and fails on HEAD.
 */
import { gzipSync } from "node:zlib";
import { brotliCompressSync } from "node:zlib";
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import {
  type BoxCa,
  INTERCEPTED_HOSTS,
  isInterceptedHost,
  openBoxCa,
  SYSTEM_ROOTS,
} from "../../mod/box-ca/mod.ts";
import { openTlsFront, type TlsFront } from "../../mod/egress/mod.ts";
import type { AdmitRefusal } from "../../mod/model-proxy/admission.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";
import { caHome, run } from "../box-ca/ca_kit.ts";
import { until } from "../kit/mod.ts";
import {
  clientHello,
  readHead,
  readToEnd,
  sendConnect,
  startProxy,
  startRawOrigin,
  type TestProxy,
  writeAll,
} from "./egress_kit.ts";
import { anthropicEvents, anthropicMessage, streamed } from "../model-proxy/fake_services.ts";
import {
  ANTHROPIC_HEADERS,
  OPENAI_HEADERS,
  PLACEHOLDER,
  type ProxyTest,
  REAL_KEYS,
  withProxy,
} from "../model-proxy/proxy_kit.ts";

const FACTORY_KEY = "fk-REAL-factory-vault-key-51c0";
const ALL_KEYS = [REAL_KEYS.anthropic, REAL_KEYS.openai, FACTORY_KEY];

const MESSAGES = {
  model: "claude-sonnet-4-5",
  max_tokens: 16,
  messages: [{ role: "user", content: "hi" }],
};

/** Factory's API as a fake that reflects the Authorization header it was sent every way it can. */
interface EchoFactory {
  url: string;
  /** Each request's method and path with its query. */
  paths: string[];
  /** Every request's headers, as text, to look for a key where it must not be. */
  seen: string[];
  close(): Promise<void>;
}

function startEchoFactory(): EchoFactory {
  const paths: string[] = [];
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    paths.push(`${req.method} ${url.pathname}${url.search}`);
    seen.push(JSON.stringify([...req.headers]));
    await req.body?.cancel();
    const auth = req.headers.get("authorization") ?? req.headers.get("x-api-key") ?? "";
    const json = JSON.stringify({ you_sent: auth, ok: true });
    switch (url.pathname.split("/").pop()) {
      case "echo":
        return new Response(json, { headers: { "content-type": "application/json" } });
      case "echo-split": {
        // The key cut across two writes.
        const at = json.indexOf(auth) + 5;
        const encoder = new TextEncoder();
        return new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(encoder.encode(json.slice(0, at)));
              controller.enqueue(encoder.encode(json.slice(at)));
              controller.close();
            },
          }),
        );
      }
      case "echo-header":
        return new Response("{}", { headers: { "x-echo": auth, [`x-${auth.slice(7)}`]: "1" } });
      case "echo-location":
        return new Response(null, {
          status: 302,
          headers: { location: `https://collector.example/cb?auth=${auth.slice(7)}` },
        });
      case "echo-error":
        return new Response(`invalid token: ${auth}`, { status: 401 });
      case "echo-gzip":
        return new Response(new Uint8Array(gzipSync(json)), {
          headers: { "content-type": "application/json", "content-encoding": "gzip" },
        });
      case "echo-br":
        return new Response(new Uint8Array(brotliCompressSync(json)), {
          headers: { "content-type": "application/json", "content-encoding": "br" },
        });
      default:
        return Response.json({ ok: true });
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    paths,
    seen,
    close: () => server.shutdown(),
  };
}

/** A task's proxy, its model endpoint and the box's front, wired as the core wires them. */
interface Box {
  t: ProxyTest;
  factory: EchoFactory;
  ca: BoxCa;
  front: TlsFront;
  proxy: TestProxy;
  /** fetch through the task's proxy, trusting the box CA. */
  client: Deno.HttpClient;
  /** Lines the front logged. */
  logs: string[];
  /** A second task's proxy, sharing the front, with its own endpoint. */
  other(): Promise<{ proxy: TestProxy; client: Deno.HttpClient; seen: string[] }>;
}

/** The taker the core gives a task's proxy (task_manager.ts #intercept), for `front`. */
function interceptor(front: TlsFront, model: ProxyTest["proxy"] | ((r: Request) => Response)) {
  return (host: string, port: number) => {
    if (port !== 443 || !isInterceptedHost(host)) return null;
    const service = INTERCEPTED_HOSTS[host];
    return (client: Deno.Conn, first: Uint8Array) =>
      front.take(client, {
        host,
        first,
        handle: (request) => {
          if (typeof model === "function") return Promise.resolve(model(request));
          if (service === "factory") return model.factoryRequest(request);
          return model.tunnelRequest(request, service);
        },
      });
  };
}

async function withBox(
  body: (box: Box) => Promise<void>,
  options: { admit?: (model: string | null) => AdmitRefusal | null; maxConnections?: number } = {},
): Promise<void> {
  const factory = startEchoFactory();
  const home = await caHome();
  const ca = await openBoxCa(home.ca, { systemRoots: SYSTEM_ROOTS });
  const logs: string[] = [];
  const front = openTlsFront({ leaf: (host) => ca.leaf(host), log: (line) => logs.push(line) });
  const closing: (() => Promise<void> | void)[] = [];
  try {
    await withProxy(async (t) => {
      const proxy = await startProxy({}, {
        intercept: interceptor(front, t.proxy),
        maxConnections: options.maxConnections,
      });
      closing.push(() => proxy.close());
      const trusting = (port: number) => {
        const client = Deno.createHttpClient({
          proxy: { url: `http://127.0.0.1:${port}` },
          caCerts: [ca.caPem],
        });
        closing.push(() => client.close());
        return client;
      };
      const client = trusting(proxy.port);
      const other = async () => {
        const seen: string[] = [];
        const second = await startProxy({}, {
          intercept: interceptor(front, (request) => {
            seen.push(new URL(request.url).pathname);
            return Response.json({ task: "other" });
          }),
        });
        closing.push(() => second.close());
        return { proxy: second, client: trusting(second.port), seen };
      };
      await body({ t, factory, ca, front, proxy, client, logs, other });
    }, {
      factory: { baseUrl: factory.url, key: FACTORY_KEY },
      redaction: () => answerRedaction(Redactor.forValues(ALL_KEYS)),
      admit: options.admit === undefined
        ? undefined
        : (request) => Promise.resolve(options.admit!(request.model)),
    });
  } finally {
    for (const close of closing.reverse()) await close();
    await front.close();
    await factory.close();
    await home.remove();
  }
}

/** A TCP connection to the task's proxy with a CONNECT tunnel open to `host`:443. */
async function tunnel(proxy: TestProxy, host: string): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
  return await sendConnect(conn, `${host}:443`);
}

/**
 * Sends `request` (HTTP/1.1, `\n` written as CRLF) inside a tunnel to `host` over the box's TLS,
 * and reads everything the front answers until it closes.
 */
async function inside(box: Box, host: string, request: string): Promise<string> {
  const tls = await Deno.startTls(await tunnel(box.proxy, host), {
    hostname: host,
    caCerts: [box.ca.caPem],
  });
  // An answer that never ends fails the test, rather than holding it.
  const timer = setTimeout(() => tls.close(), 10_000);
  try {
    await writeAll(tls, request.replaceAll("\n", "\r\n"));
    return new TextDecoder().decode(await readToEnd(tls));
  } finally {
    clearTimeout(timer);
    try {
      tls.close();
    } catch {
      // Already closed.
    }
  }
}

/** The local ports of the ESTABLISHED loopback connections to 127.0.0.1:`port` (/proc/net/tcp). */
async function portsConnectedTo(port: number): Promise<Set<number>> {
  const found = new Set<number>();
  for (const line of (await Deno.readTextFile("/proc/net/tcp")).split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 4) continue;
    const [localAddress, localPort] = fields[1].split(":");
    const [remoteAddress, remotePort] = fields[2].split(":");
    const loopback = localAddress === "0100007F" && remoteAddress === "0100007F";
    if (loopback && parseInt(remotePort, 16) === port && fields[3] === "01") {
      found.add(parseInt(localPort, 16));
    }
  }
  return found;
}

/**
 * A connection to 127.0.0.1:`port` made as any process on the host makes one (the kernel picks its
 * local port), tried again and again until its local port is one of `wanted`. Linux gives one local
 * port to connections to different destinations, and walks its whole ephemeral range for one
 * destination, so the search ends within the range's size.
 */
async function connectFromOneOf(port: number, wanted: Set<number>): Promise<Deno.TcpConn> {
  for (let tries = 0; tries < 120_000; tries++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    if (wanted.has(conn.localAddr.port)) return conn;
    conn.close();
  }
  throw new Error(`no connection to ${port} got one of the local ports ${[...wanted]}`);
}

/** The status line and body of an HTTP/1.1 answer read whole. */
function statusOf(answer: string): string {
  return answer.split("\r\n")[0];
}

// ---- The front's listener: strangers and other tasks ----

Deno.test("a process on the host that connects to one model host's listener from the port of a tunnel to another reaches no task (421)", async () => {
  // Worked when this review began: the front kept one map of its loopback connections' local
  // ports for all its listeners, and Linux gives one local port to connections to different
  // destinations. A local user cycling connections to api.openai.com's listener got, within a
  // second, a port a task's api.anthropic.com tunnel had, and its request went to that task's
  // endpoint, the placeholder (a constant) becoming the owner's key. Two tasks' tunnels to two
  // hosts could share a port the same way, the second taking over the first's requests and the
  // first's end removing the second's. Fixed in tls_front.ts: each listener keeps its own ports.
  await withBox(async (box) => {
    const held: Deno.Conn[] = [];
    try {
      for (let i = 0; i < 16; i++) held.push(await tunnel(box.proxy, "api.anthropic.com"));
      held.push(await tunnel(box.proxy, "api.openai.com"));
      await until(() => box.front.listening().length === 2);
      const port = (host: string) => box.front.listening().find((l) => l.host === host)!.port;
      let inner = new Set<number>();
      await until(async () =>
        (inner = await portsConnectedTo(port("api.anthropic.com"))).size >= 16
      );
      const stranger = await connectFromOneOf(port("api.openai.com"), inner);
      const tls = await Deno.startTls(stranger, {
        hostname: "api.openai.com",
        caCerts: [box.ca.caPem],
      });
      const body = JSON.stringify(MESSAGES);
      await writeAll(
        tls,
        `POST /v1/messages HTTP/1.1\r\nHost: api.openai.com\r\nx-api-key: ${PLACEHOLDER}\r\n` +
          `anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n` +
          `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
      const answer = new TextDecoder().decode(await readToEnd(tls));
      tls.close();
      assertEquals(statusOf(answer), "HTTP/1.1 421 Misdirected Request");
      assertEquals(box.t.anthropic.requests.length, 0);
    } finally {
      for (const conn of held) conn.close();
    }
  });
});

Deno.test("a connection from the port of a tunnel that has ended reaches no task (421)", async () => {
  await withBox(async (box) => {
    const conn = await tunnel(box.proxy, "api.anthropic.com");
    await until(() => box.front.listening().length === 1);
    const listener = box.front.listening()[0].port;
    let ports = new Set<number>();
    await until(async () => (ports = await portsConnectedTo(listener)).size === 1);
    conn.close();
    await until(() => box.front.tunnels === 0);
    // The same local port to the same listener: the kernel hands it out again once it may.
    const stranger = await connectFromOneOf(listener, ports);
    const tls = await Deno.startTls(stranger, {
      hostname: "api.anthropic.com",
      caCerts: [box.ca.caPem],
    });
    await writeAll(
      tls,
      `GET /v1/models HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: ${PLACEHOLDER}\r\n` +
        `connection: close\r\n\r\n`,
    );
    const answer = new TextDecoder().decode(await readToEnd(tls));
    tls.close();
    assertEquals(statusOf(answer), "HTTP/1.1 421 Misdirected Request");
    assertEquals(box.t.anthropic.requests.length, 0);
  });
});

Deno.test("two tasks' HTTP/2 clients each reach only their own endpoint over the shared listener", async () => {
  await withBox(async (box) => {
    const other = await box.other();
    const [mine, theirs] = await Promise.all([
      box.client,
      other.client,
    ].map(async (client) => {
      const answers = [];
      for (let i = 0; i < 3; i++) {
        const response = await fetch("https://api.anthropic.com/v1/models", {
          headers: { "x-api-key": PLACEHOLDER, "anthropic-version": "2023-06-01" },
          client,
        });
        answers.push(await response.text());
      }
      return answers;
    }));
    for (const answer of mine) assertStringIncludes(answer, "claude-sonnet-4-5");
    for (const answer of theirs) assertEquals(JSON.parse(answer), { task: "other" });
    assertEquals(box.t.anthropic.requests.length, 3);
    assertEquals(other.seen, ["/v1/models", "/v1/models", "/v1/models"]);
  });
});

Deno.test("handshakes never finished on the shared listener hold up no other task's tunnel, and a task's tunnels count toward its 256 connections", async () => {
  await withBox(async (box) => {
    const other = await box.other();
    const stalled: Deno.Conn[] = [];
    try {
      // Half a ClientHello, by tunnel and straight to the listener, never finished.
      const hello = clientHello("api.anthropic.com");
      for (let i = 0; i < 20; i++) {
        const conn = await tunnel(other.proxy, "api.anthropic.com");
        await writeAll(conn, hello.subarray(0, 20));
        stalled.push(conn);
      }
      await until(() => box.front.listening().length === 1);
      for (let i = 0; i < 20; i++) {
        const conn = await Deno.connect({
          hostname: "127.0.0.1",
          port: box.front.listening()[0].port,
        });
        await writeAll(conn, hello.subarray(0, 20));
        stalled.push(conn);
      }
      const response = await fetch("https://api.anthropic.com/v1/models", {
        headers: { "x-api-key": PLACEHOLDER, "anthropic-version": "2023-06-01" },
        client: box.client,
      });
      assertEquals(response.status, 200);
      await response.body?.cancel();
    } finally {
      for (const conn of stalled) conn.close();
    }
  });
  await withBox(async (box) => {
    const held = [await tunnel(box.proxy, "api.anthropic.com")];
    held.push(await tunnel(box.proxy, "api.factory.ai"));
    try {
      const third = await Deno.connect({ hostname: "127.0.0.1", port: box.proxy.port });
      await writeAll(third, "CONNECT api.openai.com:443 HTTP/1.1\r\n\r\n");
      const head = await readHead(third);
      third.close();
      assertStringIncludes(head, "HTTP/1.1 503 ");
      await until(() => box.front.tunnels === 2);
    } finally {
      for (const conn of held) conn.close();
    }
  }, { maxConnections: 2 });
});

Deno.test({
  name:
    "a connection to the front's listener that never finishes its TLS handshake is closed within the head timeout",
  // Fails on HEAD (not fixed): the listeners are Deno.serve on the host's 127.0.0.1, which has no
  // handshake or idle timeout (a connection sent half a ClientHello was open after 20 s here) and
  // no hook before a request. Any local user can hold as many connections to it as its own limit
  // allows, each a descriptor of the core's (root's gurt serve), until the core can open no file
  // or socket: audit writes, tasks' sockets and every task's model traffic fail. A task's own
  // tunnels are bounded (256 per task, tested above). The fix is not small: serve the tunnels'
  // TLS with no TCP listener at all (node:tls's TLSSocket on the tunnel's own connection, which
  // stack-notes.md found works, with node:http or node:http2 given the socket by
  // emit("connection")), which also ends the front's stranger problem; or a listener of the
  // front's own that closes a connection whose first request has not come within the head
  // timeout. Tried and not enough: Deno.listenTls, looking the port up at accept (which returns
  // before any TLS) and closing a stranger's connection there: once its ClientHello has begun,
  // Deno's close leaves the socket open until the handshake ends, which it never does.
  ignore: true,
  fn: async () => {
    await withBox(async (box) => {
      const conn = await tunnel(box.proxy, "api.anthropic.com");
      conn.close();
      await until(() => box.front.listening().length === 1);
      const stranger = await Deno.connect({
        hostname: "127.0.0.1",
        port: box.front.listening()[0].port,
      });
      await writeAll(stranger, clientHello("api.anthropic.com").subarray(0, 20));
      const started = Date.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        readToEnd(stranger).then(() => true),
        new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), 15_000)),
      ]);
      clearTimeout(timer);
      stranger.close();
      assert(ended, `still open after ${Date.now() - started} ms`);
    });
  },
});

// ---- Getting the key out: the service echoes it ----

Deno.test("a large POST over HTTP/2 to a path the endpoint does not relay gets its 404 in the service's format, not a reset stream", async () => {
  await withBox(async (box) => {
    const file = await Deno.makeTempFile();
    try {
      await Deno.writeTextFile(
        file,
        JSON.stringify({ model: "gpt-5", input: "x".repeat(4 * 1024 * 1024) }),
      );
      for (let i = 0; i < 3; i++) {
        const curl = await run("curl", [
          "-sS",
          "--http2",
          "--cacert",
          box.ca.bundlePath,
          "--proxy",
          `http://127.0.0.1:${box.proxy.port}`,
          "-H",
          `x-api-key: ${PLACEHOLDER}`,
          "-H",
          "content-type: application/json",
          "--data-binary",
          `@${file}`,
          "-w",
          "\n%{http_version} %{http_code}",
          "https://api.anthropic.com/v1/responses",
        ]);
        assertEquals(curl.code, 0, curl.stderr);
        assert(curl.stdout.endsWith("\n2 404"), curl.stdout.slice(-300));
      }
    } finally {
      await Deno.remove(file);
    }
    assertEquals([box.t.anthropic.requests.length, box.t.openai.requests.length], [0, 0]);
  });
});

Deno.test("a key the model service echoes through the tunnel (a header, a redirect's Location, an error body, a stream) never reaches the task", async () => {
  await withBox(async (box) => {
    const key = REAL_KEYS.anthropic;
    const post = (body: unknown) =>
      fetch("https://api.anthropic.com/v1/messages", {
        method: "POST",
        headers: ANTHROPIC_HEADERS,
        body: JSON.stringify(body),
        redirect: "manual",
        client: box.client,
      });
    const texts: string[] = [];
    const keep = async (response: Response) => {
      texts.push(JSON.stringify([response.status, ...response.headers]), await response.text());
    };
    box.t.anthropic.answer({
      writes: [JSON.stringify(anthropicMessage("claude-sonnet-4-5", "hi"))],
      headers: { "x-debug": `your key ${key}` },
    });
    await keep(await post(MESSAGES));
    box.t.anthropic.answer({
      status: 307,
      writes: ["{}"],
      headers: { location: `https://collector.example/?k=${key}` },
    });
    await keep(await post(MESSAGES));
    box.t.anthropic.answer({
      status: 401,
      writes: [JSON.stringify({
        type: "error",
        error: { type: "authentication_error", message: `invalid x-api-key ${key}` },
      })],
    });
    await keep(await post(MESSAGES));
    box.t.anthropic.answer(
      streamed(anthropicEvents("claude-sonnet-4-5", [key.slice(0, 9), key.slice(9)])),
    );
    await keep(await post({ ...MESSAGES, stream: true }));
    assertEquals(box.t.anthropic.requests.length, 4);
    for (const text of texts) assertNotIncludes(text, key);
    assertStringIncludes(texts.join(""), "collector.example");
  });
});

Deno.test("Factory's plain paths that reflect the Authorization header (body, split body, header, Location, error, gzip, br) never give the task the key", async () => {
  await withBox(async (box) => {
    const texts: string[] = [];
    // Session s1 is the task's own: only its own session's paths are relayed.
    const made = await fetch("https://api.factory.ai/api/sessions/create", {
      method: "POST",
      headers: { authorization: `Bearer ${PLACEHOLDER}`, "content-type": "application/json" },
      body: JSON.stringify({ id: "s1" }),
      client: box.client,
    });
    texts.push(await made.text());
    for (const name of ["echo", "echo-split", "echo-header", "echo-location", "echo-error"]) {
      const response = await fetch(`https://api.factory.ai/api/sessions/s1/${name}`, {
        headers: { authorization: `Bearer ${PLACEHOLDER}` },
        redirect: "manual",
        client: box.client,
      });
      texts.push(`${name} ${response.status} ${JSON.stringify([...response.headers])}`);
      texts.push(await response.text());
    }
    for (const name of ["echo-gzip", "echo-br"]) {
      // The client asks for the bytes as they come and reads them itself.
      const answer = await inside(
        box,
        "api.factory.ai",
        `GET /api/sessions/s1/${name} HTTP/1.1\nHost: api.factory.ai\n` +
          `Authorization: Bearer ${PLACEHOLDER}\nAccept-Encoding: gzip, br\n` +
          `Connection: close\n\n`,
      );
      texts.push(`${name} ${answer}`);
      assertStringIncludes(answer, "[a vault key]");
    }
    assertEquals(box.factory.paths.length, 8);
    for (const seen of box.factory.seen) assertStringIncludes(seen, FACTORY_KEY);
    for (const text of texts) assertNotIncludes(text, FACTORY_KEY);
    for (const text of texts) assertNotIncludes(text, FACTORY_KEY.slice(3));
  });
});

// ---- Another host or path, through the front ----

Deno.test("inside a tunnel, absolute-form, a Host of another host, CONNECT and a smuggled or pipelined request send nothing but the tunnel's own service its allowed paths", async () => {
  await withBox(async (box) => {
    const evil = startRawOrigin();
    try {
      const there = `127.0.0.1:${evil.port}`;
      const auth = `Authorization: Bearer ${PLACEHOLDER}`;
      const answers = [
        await inside(
          box,
          "api.factory.ai",
          `GET http://${there}/api/billing/limits HTTP/1.1\nHost: ${there}\n${auth}\n` +
            `Connection: close\n\n`,
        ),
        await inside(
          box,
          "api.factory.ai",
          `GET /api/billing/limits HTTP/1.1\nHost: ${there}\n${auth}\nConnection: close\n\n`,
        ),
        // A Host that carries a path: the path the front parses is the one checked and sent.
        await inside(
          box,
          "api.factory.ai",
          `GET /api/connectors/tools/call HTTP/1.1\nHost: api.factory.ai/api/billing/limits?\n` +
            `${auth}\nConnection: close\n\n`,
        ),
        await inside(
          box,
          "api.factory.ai",
          `CONNECT ${there} HTTP/1.1\nHost: ${there}\n${auth}\nConnection: close\n\n`,
        ),
        await inside(
          box,
          "api.anthropic.com",
          `CONNECT ${there} HTTP/1.1\nHost: ${there}\nx-api-key: ${PLACEHOLDER}\n` +
            `Connection: close\n\n`,
        ),
        // Content-Length and chunked at once, a second request in the body.
        await inside(
          box,
          "api.factory.ai",
          `POST /api/ingest HTTP/1.1\nHost: api.factory.ai\n${auth}\nContent-Length: 80\n` +
            `Transfer-Encoding: chunked\n\n0\n\nPOST /api/connectors/tools/call HTTP/1.1\n` +
            `Host: api.factory.ai\n${auth}\nContent-Length: 0\n\n`,
        ),
        // Pipelined: the second request is judged as a request of its own.
        await inside(
          box,
          "api.factory.ai",
          `GET /api/cli/whoami HTTP/1.1\nHost: api.factory.ai\n${auth}\n\n` +
            `POST /api/connectors/tools/call HTTP/1.1\nHost: api.factory.ai\n${auth}\n` +
            `Content-Length: 2\nConnection: close\n\n{}`,
        ),
      ];
      assertEquals(answers.map(statusOf), [
        "HTTP/1.1 200 OK",
        "HTTP/1.1 200 OK",
        "HTTP/1.1 200 OK",
        // CONNECT inside a tunnel: the front opens no tunnels (before, the endpoint's 403, 404).
        "HTTP/1.1 405 Method Not Allowed",
        "HTTP/1.1 405 Method Not Allowed",
        "HTTP/1.1 400 Bad Request",
        "HTTP/1.1 200 OK",
      ]);
      assertStringIncludes(answers[6], "HTTP/1.1 403 Forbidden");
      // HTTP/2 with an :authority (and SNI) of another model host, in api.anthropic.com's tunnel.
      const curl = await run("curl", [
        "-sS",
        "-k",
        "--http2",
        "--proxy",
        `http://127.0.0.1:${box.proxy.port}`,
        "--connect-to",
        "api.openai.com:443:api.anthropic.com:443",
        "-H",
        `authorization: Bearer ${PLACEHOLDER}`,
        "-H",
        "content-type: application/json",
        "-d",
        JSON.stringify({ model: "gpt-5", input: "hi" }),
        "-w",
        "\n%{http_version} %{http_code}",
        "https://api.openai.com/v1/responses",
      ]);
      assertEquals(curl.code, 0, curl.stderr);
      assert(curl.stdout.endsWith("\n2 404"), curl.stdout);
      assertEquals(evil.received, []);
      assertEquals(box.factory.paths, [
        "GET /api/billing/limits",
        "GET /api/billing/limits",
        "GET /api/billing/limits?/api/connectors/tools/call",
        "GET /api/cli/whoami",
      ]);
      assertEquals([box.t.anthropic.requests.length, box.t.openai.requests.length], [0, 0]);
    } finally {
      await evil.close();
    }
  });
});

Deno.test("a Factory path that climbs out of /api/sessions/ after URL parsing (.., %2e%2e, .%2E, backslashes, //) is refused and Factory is sent nothing", async () => {
  await withBox(async (box) => {
    const statuses: string[] = [];
    for (
      const path of [
        "/api/sessions/../connectors/tools/call",
        "/api/sessions/%2e%2e/connectors/tools/call",
        "/api/sessions/.%2E/connectors/tools/call",
        "/api/sessions/x/..\\..\\connectors/tools/call",
        "//api/sessions/x",
        "/api/sessions//x",
        "/api/llm/a/v1/messages/../../../../connectors/tools/call",
      ]
    ) {
      const answer = await inside(
        box,
        "api.factory.ai",
        `POST ${path} HTTP/1.1\nHost: api.factory.ai\nAuthorization: Bearer ${PLACEHOLDER}\n` +
          `Content-Length: 2\nConnection: close\n\n{}`,
      );
      statuses.push(`${path} ${statusOf(answer)}`);
      assertStringIncludes(answer, "see runbook.md#model-proxy-refused");
    }
    for (const status of statuses) assert(status.endsWith(" 403 Forbidden"), status);
    assertEquals(box.factory.paths, []);
  });
});

Deno.test("a Factory session path with a segment a server could read as a parent (..;, ..%3b) or odd bytes (%00, overlong, %u) is refused and Factory is sent nothing", async () => {
  // Worked when this review began: any path under /api/sessions/ was relayed but for an encoded
  // slash, dot or backslash, so `/api/sessions/..;/connectors/tools/call` (which a Tomcat-style
  // server reads as /api/connectors/...) reached Factory with the owner's key. Droid's session
  // paths are /api/sessions/<uuid>/<verb>[/<verb>]. Fixed in factory_paths.ts: each segment under
  // /api/sessions/ is letters, digits, '-', '_', '.' and '~', and does not start with a dot.
  await withBox(async (box) => {
    const statuses: string[] = [];
    for (
      const path of [
        "/api/sessions/..;/connectors/tools/call",
        "/api/sessions/..%3b/connectors/tools/call",
        "/api/sessions/x;jsessionid=1/connectors",
        "/api/sessions/%00/x",
        "/api/sessions/%c0%ae%c0%ae/connectors/tools/call",
        "/api/sessions/%u002e%u002e/connectors/tools/call",
        "/api/sessions/.hidden",
      ]
    ) {
      const answer = await inside(
        box,
        "api.factory.ai",
        `POST ${path} HTTP/1.1\nHost: api.factory.ai\nAuthorization: Bearer ${PLACEHOLDER}\n` +
          `Content-Length: 2\nConnection: close\n\n{}`,
      );
      statuses.push(`${path} ${statusOf(answer)}`);
    }
    for (const status of statuses) assert(status.endsWith(" 403 Forbidden"), statuses.join("\n"));
    assertEquals(box.factory.paths, []);
    // Droid's own session paths still go (the session the task made: factory_paths.ts).
    const id = "7f7c2a64-1c2e-4f0e-9a51-0d8b3f2f9e11";
    const made = await inside(
      box,
      "api.factory.ai",
      `POST /api/sessions/create HTTP/1.1\nHost: api.factory.ai\nAuthorization: Bearer ${PLACEHOLDER}\n` +
        `Content-Length: ${JSON.stringify({ id }).length}\nConnection: close\n\n${
          JSON.stringify({ id })
        }`,
    );
    assertEquals(statusOf(made), "HTTP/1.1 200 OK");
    for (const path of [`/api/sessions/${id}`, `/api/sessions/${id}/droid-status`]) {
      const answer = await inside(
        box,
        "api.factory.ai",
        `POST ${path} HTTP/1.1\nHost: api.factory.ai\nAuthorization: Bearer ${PLACEHOLDER}\n` +
          `Content-Length: 2\nConnection: close\n\n{}`,
      );
      assertEquals(statusOf(answer), "HTTP/1.1 200 OK");
    }
  });
});

// ---- The placeholder rule, the body checks and the meter, through the tunnel ----

Deno.test("through each host's tunnel the placeholder becomes only that service's key, in any credential header; another credential goes as it is", async () => {
  await withBox(async (box) => {
    const send = async (url: string, headers: Record<string, string>, body?: unknown) => {
      const response = await fetch(url, {
        method: body === undefined ? "GET" : "POST",
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        client: box.client,
      });
      await response.body?.cancel();
      return response.status;
    };
    const { "x-api-key": _a, ...anthropicBare } = ANTHROPIC_HEADERS;
    const { authorization: _o, ...openaiBare } = OPENAI_HEADERS;
    const bearer = { authorization: `Bearer ${PLACEHOLDER}` };
    const xKey = { "x-api-key": PLACEHOLDER };
    const statuses = [
      await send("https://api.anthropic.com/v1/messages", { ...anthropicBare, ...xKey }, MESSAGES),
      await send(
        "https://api.anthropic.com/v1/messages",
        { ...anthropicBare, ...bearer },
        MESSAGES,
      ),
      await send("https://api.anthropic.com/v1/models", { ...anthropicBare, ...bearer, ...xKey }),
      await send("https://api.openai.com/v1/models", { ...openaiBare, ...xKey }),
      await send("https://api.openai.com/v1/models", { ...openaiBare, ...bearer }),
      // Anthropic's path in OpenAI's tunnel, with the placeholder: not relayed at all.
      await send("https://api.openai.com/v1/messages", ANTHROPIC_HEADERS, MESSAGES),
      await send("https://api.factory.ai/api/cli/whoami", xKey),
      await send("https://api.factory.ai/api/llm/a/v1/messages", ANTHROPIC_HEADERS, MESSAGES),
      await send("https://api.openai.com/v1/models", {
        ...openaiBare,
        authorization: "Bearer sk-the-users-own",
      }),
    ];
    assertEquals(statuses, [200, 200, 200, 200, 200, 404, 200, 200, 200]);
    const anthropic = JSON.stringify(box.t.anthropic.requests);
    const openai = JSON.stringify(box.t.openai.requests);
    const factory = box.factory.seen.join("\n");
    for (const [text, own] of [[anthropic, 0], [openai, 1], [factory, 2]] as const) {
      ALL_KEYS.forEach((key, index) => {
        if (index !== own) assertNotIncludes(text, key);
      });
      assertNotIncludes(text, PLACEHOLDER);
    }
    assertEquals(
      box.t.anthropic.requests.map((r) => [r.headers["x-api-key"], r.headers.authorization]),
      [
        [REAL_KEYS.anthropic, undefined],
        [undefined, `Bearer ${REAL_KEYS.anthropic}`],
        [REAL_KEYS.anthropic, `Bearer ${REAL_KEYS.anthropic}`],
      ],
    );
    assertEquals(
      box.t.openai.requests.map((r) => [r.headers["x-api-key"], r.headers.authorization]),
      [
        [REAL_KEYS.openai, undefined],
        [undefined, `Bearer ${REAL_KEYS.openai}`],
        [undefined, "Bearer sk-the-users-own"],
      ],
    );
  });
});

Deno.test("through the tunnel the body checks, the budget hold and the meter hold: count_tokens and a client's own key are checked, a stream is metered, an over-budget request sends nothing", async () => {
  await withBox(async (box) => {
    const post = async (url: string, body: unknown, headers = ANTHROPIC_HEADERS) => {
      const response = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        client: box.client,
      });
      return { status: response.status, text: await response.text() };
    };
    const fetching = {
      ...MESSAGES,
      messages: [{
        role: "user",
        content: [{ type: "image", source: { type: "url", url: "https://collector.example/x" } }],
      }],
    };
    const refused = [
      await post("https://api.anthropic.com/v1/messages/count_tokens", fetching),
      await post("https://api.anthropic.com/v1/messages", {
        ...MESSAGES,
        tools: [{ type: "web_search_20250305", name: "web_search" }],
      }, { ...ANTHROPIC_HEADERS, "x-api-key": "sk-ant-the-users-own" }),
      await post("https://api.factory.ai/api/llm/a/v1/messages", fetching, {
        ...ANTHROPIC_HEADERS,
        authorization: `Bearer ${PLACEHOLDER}`,
      }),
      await post("https://api.anthropic.com/v1/messages", { ...MESSAGES, model: "over-budget" }),
    ];
    assertEquals(refused.map((answer) => answer.status), [403, 403, 403, 403]);
    assertStringIncludes(refused[3].text, "see runbook.md#model-budget");
    assertEquals(box.t.anthropic.requests.length, 0);
    assertEquals(box.factory.paths, []);
    const stream = await post("https://api.anthropic.com/v1/messages", {
      ...MESSAGES,
      stream: true,
    });
    assertEquals(stream.status, 200);
    await box.t.usageReports(1);
    assertEquals(box.t.usage.map((event) => [event.service, event.path]), [
      ["anthropic", "/v1/messages"],
    ]);
    assert(box.t.usage[0].tokens.output > 0);
  }, {
    admit: (model) =>
      model === "over-budget"
        ? { status: 403, message: "the owner refused. see runbook.md#model-budget" }
        : null,
  });
});
