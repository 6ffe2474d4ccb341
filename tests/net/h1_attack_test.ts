/**
 * Hostile bytes against a real guarded door on a Unix socket (mod/net/h1_*.ts): framing that
 * must be refused without the handler seeing a smuggled request, and answers that must frame
 * themselves truly. Some of these fail on doorsperf b4d2d29: each says what it expects.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { serveGuarded } from "../../mod/net/mod.ts";

type Handler = (request: Request) => Response | Promise<Response>;

/** An echo of method, path and body as JSON, unless `handler` is given. */
async function withDoor(
  run: (
    send: (bytes: Uint8Array | string, opts?: { halfClose?: boolean }) => Promise<string>,
    seen: string[],
  ) => Promise<void>,
  handler?: Handler,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-h1-attack-" });
  const path = `${dir}/door.sock`;
  const seen: string[] = [];
  const server = serveGuarded({ path }, async (request) => {
    const url = new URL(request.url);
    seen.push(`${request.method} ${url.pathname}`);
    if (handler) return await handler(request);
    const body = await request.text();
    return Response.json({ method: request.method, path: url.pathname, body });
  }, { name: "test door", headerTimeoutMs: 2000, idleTimeoutMs: 300 });
  const send = async (bytes: Uint8Array | string, opts: { halfClose?: boolean } = {}) => {
    const conn = await Deno.connect({ transport: "unix", path });
    const data = typeof bytes === "string" ? latin1(bytes) : bytes;
    const writing = (async () => {
      for (let at = 0; at < data.length;) at += await conn.write(data.subarray(at));
      if (opts.halfClose) await conn.closeWrite();
    })().catch(() => {});
    const timer = setTimeout(() => conn.close(), 4000);
    let text = "";
    const buffer = new Uint8Array(65536);
    try {
      while (true) {
        const count = await conn.read(buffer);
        if (count === null) break;
        text += String.fromCharCode(...buffer.subarray(0, count));
      }
    } catch {
      // closed at the deadline, or reset
    } finally {
      clearTimeout(timer);
      await writing;
      try {
        conn.close();
      } catch {
        // already
      }
    }
    return text;
  };
  try {
    await run(send, seen);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

const TAIL = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";

Deno.test("h1 attack: framing tricks are refused and the bytes after them are never a request", async () => {
  const cases: [string, string][] = [
    [
      "CL and TE",
      "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
    [
      "TE twice",
      "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
    ["TE list", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"],
    [
      "CL twice differing",
      "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 40\r\n\r\n",
    ],
    [
      "CL leading zero vs not",
      "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 00\r\n\r\n",
    ],
    ["CL plus sign", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: +0\r\n\r\n"],
    ["CL list", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0, 0\r\n\r\n"],
    ["CL huge", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n"],
    ["space before colon", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n"],
    ["obs-fold", "POST /a HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n"],
    ["bare LF in head", "POST /a HTTP/1.1\nHost: x\r\nContent-Length: 0\r\n\r\n"],
    ["bare CR in value", "POST /a HTTP/1.1\r\nHost: x\r\nX: a\rb\r\nContent-Length: 0\r\n\r\n"],
    ["NUL in value", "POST /a HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\nContent-Length: 0\r\n\r\n"],
    [
      "chunk size overflow",
      "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000\r\n",
    ],
    [
      "chunk size negative",
      "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n\r\n",
    ],
    [
      "chunk size 0x",
      "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0x0\r\n\r\n",
    ],
    ["chunk bare LF", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\n\r\n"],
    [
      "chunk missing CRLF",
      "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naX\r\n0\r\n\r\n",
    ],
    [
      "chunked HTTP/1.0",
      "POST /a HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
    ["CL with vertical tab", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\x0b\r\n\r\n"],
    ["CL with NBSP (0xA0)", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: \xa00\r\n\r\n"],
    [
      "TE chunked with form feed",
      "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\x0c\r\n\r\n0\r\n\r\n",
    ],
  ];
  const wrong: string[] = [];
  await withDoor(async (send, seen) => {
    for (const [what, bytes] of cases) {
      seen.length = 0;
      const text = await send(bytes + TAIL);
      const got = statuses(text);
      const fine = got.length === 1 && got[0] >= 400 && !seen.includes("GET /smuggled");
      if (!fine) {
        wrong.push(`${what}: statuses ${JSON.stringify(got)}, handler saw ${JSON.stringify(seen)}`);
      }
    }
  });
  assertEquals(wrong, []);
});

Deno.test("h1 attack: a small body taken whole is the body the handler reads when a request follows it", async () => {
  await withDoor(async (send) => {
    const text = await send(
      "POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
        "POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nworld",
    );
    assertStringIncludes(text, `"path":"/one","body":"hello"`);
    assertStringIncludes(text, `"path":"/two","body":"world"`);
  });
});

Deno.test("h1 attack: trailers are bounded like a head (64 KiB of trailer lines is refused)", async () => {
  await withDoor(async (send) => {
    const trailers = "X-T: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".repeat(2000);
    const text = await send(
      "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n1\r\na\r\n0\r\n" +
        trailers + "\r\n",
    );
    const got = statuses(text);
    assert(got.length === 1 && got[0] >= 400, `statuses ${JSON.stringify(got)}`);
  });
});

Deno.test("h1 attack: a handler's Content-Length that its streamed body overruns does not let bytes pass as the next answer", async () => {
  let count = 0;
  await withDoor(async (send) => {
    const text = await send(
      "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    // The client reads the first answer by its length; the handler's extra bytes must never
    // reach it as the answer to /b.
    assert(!text.includes("forged!"), `the wire: ${JSON.stringify(text)}`);
  }, () => {
    count++;
    if (count > 1) return new Response("ok");
    const fake = "HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nforged!";
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        controller.enqueue(latin1("12345" + fake));
        controller.close();
      },
    });
    return new Response(stream, { headers: { "content-length": "5" } });
  });
});

Deno.test("h1 attack: a streamed answer to a Connection: close request says connection: close", async () => {
  await withDoor(async (send) => {
    const text = await send("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assertStringIncludes(text.toLowerCase(), "connection: close\r\n");
  }, () => {
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        controller.enqueue(latin1("streamed"));
        controller.close();
      },
    });
    return new Response(stream);
  });
});

Deno.test("h1 attack: an HTTP/1.0 client is never sent 100 Continue", async () => {
  await withDoor(async (send) => {
    const text = await send(
      "POST /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
    );
    assert(!text.includes("100 Continue"), text.slice(0, 80));
  });
});

Deno.test("h1 attack: HTTP/1.1 without Host, or with two, is refused (RFC 9112 3.2)", async () => {
  await withDoor(async (send) => {
    const none = statuses(await send("GET /a HTTP/1.1\r\nConnection: close\r\n\r\n"));
    const two = statuses(
      await send("GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n"),
    );
    assertEquals([none, two], [[400], [400]]);
  });
});

Deno.test("h1 attack: a client that half-closes after its request still gets a streamed answer", async () => {
  await withDoor(async (send) => {
    const text = await send("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", {
      halfClose: true,
    });
    assertStringIncludes(text, "streamed");
  }, () => {
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        controller.enqueue(latin1("streamed"));
        controller.close();
      },
    });
    return new Response(stream);
  });
});

Deno.test("h1 attack: HEAD, pipelining after a handler throws, and 100-continue hold", async () => {
  let n = 0;
  await withDoor(async (send, seen) => {
    const head = await send("HEAD /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert(head.endsWith("\r\n\r\n"), "a HEAD answer has no body");
    assertStringIncludes(head, "content-length: ");
    seen.length = 0;
    const thrown = await send(
      "GET /throw HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assertEquals(statuses(thrown), [500, 200]);
    const cont = await send(
      "POST /c HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
    );
    assertEquals(statuses(cont), [100, 200]);
  }, async (request) => {
    n++;
    if (new URL(request.url).pathname === "/throw") throw new Error("boom");
    return new Response(await request.text() || "ok");
  });
  assert(n > 0);
});

Deno.test("h1 attack: a body the handler leaves unread (or cancels) is drained, and a request inside it is never served", async () => {
  await withDoor(async (send, seen) => {
    const inside = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
    const big = "a".repeat(100_000 - inside.length) + inside;
    const chunked = `${inside.length.toString(16)}\r\n${inside}\r\n0\r\n\r\n`;
    const text = await send(
      `POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: ${big.length}\r\n\r\n${big}` +
        `POST /cancel HTTP/1.1\r\nHost: x\r\nContent-Length: ${big.length}\r\n\r\n${big}` +
        `POST /ignore HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}` +
        `GET /with-body HTTP/1.1\r\nHost: x\r\nContent-Length: ${inside.length}\r\n\r\n${inside}` +
        "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assertEquals(statuses(text), [200, 200, 200, 200, 200]);
    assertEquals(seen, [
      "POST /ignore",
      "POST /cancel",
      "POST /ignore",
      "GET /with-body",
      "GET /last",
    ]);
  }, async (request) => {
    if (new URL(request.url).pathname === "/cancel") {
      const reader = request.body!.getReader();
      await reader.read();
      await reader.cancel();
    }
    return new Response("ok");
  });
});

Deno.test("h1 attack: absolute-form, //host and %2e%2e targets give the handler a path on this door", async () => {
  await withDoor(async (send, seen) => {
    await send("GET http://elsewhere/admin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await send("GET //elsewhere/admin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await send("GET /v1/%2e%2e/admin?x#y HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await send("GET /v1/..%2fadmin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assertEquals(seen, ["GET /admin", "GET //elsewhere/admin", "GET /admin", "GET /v1/..%2fadmin"]);
  });
});

Deno.test("h1 attack: a bodiless answer with a handler's Content-Length does not swallow the next answer", async () => {
  let count = 0;
  await withDoor(async (send) => {
    const text = await send(
      "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    const first = /content-length: (\d+)\r\n/i.exec(text);
    const declared = Number(first?.[1] ?? 0);
    const afterHead = text.slice(text.indexOf("\r\n\r\n") + 4);
    // The second answer must not lie inside the first one's declared body.
    assert(
      declared === 0 || afterHead.length > declared + 20,
      `first answer declares ${declared} bytes; what follows: ${
        JSON.stringify(afterHead.slice(0, 80))
      }`,
    );
  }, () => {
    count++;
    if (count > 1) return new Response("second");
    return new Response(null, { headers: { "content-length": "150" } });
  });
});
