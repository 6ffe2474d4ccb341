/**
 * HTTP over a Unix socket as the roles send it: a request marked repeatable (a /call with its key)
 * goes on a kept connection and is sent again on a new one only when the server closed the kept
 * one before answering; every other request has a connection of its own and is never sent twice.
 */
import {
  closeKeptConnections,
  postCall,
  requestJson,
  SocketUnreachableError,
} from "../../mod/net/mod.ts";
import { assert, assertEquals, assertRejects } from "../assert.ts";

/** How the test server treats each connection after reading a request. */
type Manner = "answer" | "answer-then-close" | "close-without-answer";

interface TestServer {
  socket: string;
  /** The request heads received, with the number of the connection each came on. */
  requests: { connection: number; head: string }[];
  connections(): number;
  stop(): Promise<void>;
}

/** A minimal HTTP/1.1 server on a Unix socket that answers `{"ok": true, "output": <request number>}`. */
async function testServer(manner: Manner): Promise<TestServer> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-unix-http-" });
  const socket = `${dir}/test.sock`;
  const listener = Deno.listen({ transport: "unix", path: socket });
  const requests: { connection: number; head: string }[] = [];
  const open = new Set<Deno.Conn>();
  const serving: Promise<void>[] = [];
  let accepted = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      const number = ++accepted;
      open.add(conn);
      serving.push(
        serve(conn, number).finally(() => {
          open.delete(conn);
          try {
            conn.close();
          } catch {
            // already closed
          }
        }),
      );
    }
  })();

  async function serve(conn: Deno.Conn, number: number): Promise<void> {
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(64 * 1024);
    let text = "";
    while (true) {
      const end = text.indexOf("\r\n\r\n");
      if (end === -1) {
        const n = await conn.read(buffer).catch(() => null);
        if (n === null) return;
        text += decoder.decode(buffer.subarray(0, n));
        continue;
      }
      const head = text.slice(0, end);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? "0");
      while (text.length < end + 4 + length) {
        const n = await conn.read(buffer).catch(() => null);
        if (n === null) return;
        text += decoder.decode(buffer.subarray(0, n));
      }
      text = text.slice(end + 4 + length);
      requests.push({ connection: number, head });
      if (manner === "close-without-answer") return;
      const body = JSON.stringify({ ok: true, output: requests.length });
      await conn.write(new TextEncoder().encode(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      ));
      if (manner === "answer-then-close") return;
    }
  }

  return {
    socket,
    requests,
    connections: () => accepted,
    async stop() {
      closeKeptConnections(socket);
      listener.close();
      await accepting.catch(() => {});
      for (const conn of open) {
        try {
          conn.close();
        } catch {
          // already closed
        }
      }
      await Promise.allSettled(serving);
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const CALL = { tool: "example.echo", input: { text: "hello" }, key: "k1" };

Deno.test("calls one after another share one kept connection; other requests each open and close their own", async () => {
  const server = await testServer("answer");
  try {
    for (let i = 1; i <= 3; i++) {
      const answer = await postCall(server.socket, CALL);
      assertEquals(answer, { status: 200, body: { ok: true, output: i } });
    }
    assertEquals(server.connections(), 1);
    for (const { head } of server.requests) assert(/connection: keep-alive/i.test(head), head);
    await requestJson(server.socket, { method: "GET", path: "/task" });
    await requestJson(server.socket, { method: "POST", path: "/step", body: { text: "x" } });
    assertEquals(server.connections(), 3);
    for (const { head } of server.requests.slice(3)) {
      assert(/connection: close/i.test(head), head);
    }
  } finally {
    await server.stop();
  }
});

Deno.test("a call whose kept connection the server closed is sent once more, on a new connection", async () => {
  const server = await testServer("answer-then-close");
  try {
    assertEquals((await postCall(server.socket, CALL)).body, { ok: true, output: 1 });
    assertEquals((await postCall(server.socket, CALL)).body, { ok: true, output: 2 });
    assertEquals(server.requests.map((r) => r.connection), [1, 2]);
  } finally {
    await server.stop();
  }
});

Deno.test("a request on a new connection that ends without an answer is not sent again, repeatable or not", async () => {
  const server = await testServer("close-without-answer");
  try {
    await assertRejects(
      () => requestJson(server.socket, { method: "POST", path: "/cost", body: { cents: 1 } }),
      SocketUnreachableError,
    );
    await assertRejects(() => postCall(server.socket, CALL), SocketUnreachableError);
    assertEquals(server.requests.length, 2);
    assertEquals(server.connections(), 2);
  } finally {
    await server.stop();
  }
});
