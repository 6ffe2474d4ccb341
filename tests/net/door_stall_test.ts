/**
 * A guarded door's stall deadline (stallTimeoutMs): after its head, a request whose body sends
 * nothing, or whose client reads nothing of its answer, does not hold the connection for ever.
 * Real Unix sockets; the guard timers only keep a failing run from hanging.
 */
import { assert, assertEquals } from "../assert.ts";
import { serveGuarded } from "../../mod/net/mod.ts";

const GUARD_MS = 10_000;

async function withDoor(
  handler: (request: Request) => Response | Promise<Response>,
  run: (path: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-door-stall-" });
  const path = `${dir}/door.sock`;
  const server = serveGuarded({ path }, handler, {
    name: "stall door",
    headerTimeoutMs: 5000,
    idleTimeoutMs: 5000,
    stallTimeoutMs: 200,
    log: () => {},
  });
  try {
    await run(path);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Resolves with `promise`'s value, or "guard" when the guard time passes first. */
function guarded<T>(promise: Promise<T>): Promise<T | "guard"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<"guard">((resolve) => {
    timer = setTimeout(() => resolve("guard"), GUARD_MS);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

Deno.test("door stall: a body that stops coming after its head fails the handler's read and ends the connection", async () => {
  let bodyError = Promise.withResolvers<string>();
  await withDoor(async (request) => {
    try {
      await request.text();
      bodyError.resolve("read whole");
    } catch (error) {
      bodyError.resolve((error as Error).name);
    }
    return new Response("late");
  }, async (path) => {
    bodyError = Promise.withResolvers<string>();
    const conn = await Deno.connect({ transport: "unix", path });
    try {
      const head = "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nab";
      await conn.write(new TextEncoder().encode(head));
      // The client sends no more and keeps its connection open.
      const ended = (async () => {
        const buffer = new Uint8Array(4096);
        while ((await conn.read(buffer).catch(() => null)) !== null);
        return "ended";
      })();
      assertEquals(await guarded(bodyError.promise), "IncompleteBodyError");
      assertEquals(await guarded(ended), "ended");
    } finally {
      conn.close();
    }
  });
});

Deno.test("door stall: a client that reads nothing of a streamed answer has it cancelled", async () => {
  const cancelled = Promise.withResolvers<string>();
  let made = 0;
  await withDoor(() => {
    const chunk = new Uint8Array(64 * 1024).fill(97);
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          made++;
          controller.enqueue(chunk);
        },
        cancel() {
          cancelled.resolve("cancelled");
        },
      }),
    );
  }, async (path) => {
    const conn = await Deno.connect({ transport: "unix", path });
    try {
      await conn.write(new TextEncoder().encode("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
      // The client never reads: the socket's buffers fill and the answer's writes wait.
      assertEquals(await guarded(cancelled.promise), "cancelled");
      assert(made > 1, `${made} chunks made`);
    } finally {
      conn.close();
    }
  });
});
