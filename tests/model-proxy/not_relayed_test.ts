/**
 * A request for a path the model endpoint does not relay has its body read before the 404 (so an
 * HTTP/2 client still sending sees the 404, not a reset: tests/egress/attack_interception_test.ts),
 * but the body is held to what every body is: it draws on the task's byte total as it arrives, and
 * while it is read it holds one of the task's places (maxConcurrent), so bodies near 20 MiB that
 * hold back their last byte cannot grow the core without bound. Before, such a body took no place
 * and drew nothing (issue 28).
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { until } from "../kit/wait.ts";
import { withProxy } from "./proxy_kit.ts";

const SENT = 256 * 1024;

/** A POST to `path` that declares 20 MiB and sends `SENT` bytes of it, then waits. */
async function heldBody(socket: string, path: string): Promise<Deno.UnixConn> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  const head = [
    `POST ${path} HTTP/1.1`,
    "host: model.local",
    "content-type: application/json",
    `content-length: ${20 * 1024 * 1024}`,
    "",
    "",
  ].join("\r\n");
  const bytes = new TextEncoder().encode(head);
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
  const body = new Uint8Array(SENT).fill(0x20);
  written = 0;
  while (written < body.length) written += await conn.write(body.subarray(written));
  return conn;
}

Deno.test("an unrelayed path's body draws on the task's total and holds a place while it is read", async () => {
  let drawn = 0;
  await withProxy(async (t) => {
    const conn = await heldBody(t.proxy.socketPath, "/v1/not-a-model-path");
    try {
      await until(() => drawn === SENT, { what: `${SENT} bytes drawn on the total` });
      assertEquals(t.proxy.active, 1);
      const busy = await t.openaiPost("/v1/responses", { model: "gpt-5", input: "hi" });
      assertEquals(busy.status, 429);
      assertStringIncludes((await busy.json()).error.message, "model requests under way");
    } finally {
      conn.close();
    }
    await until(() => t.proxy.active === 0, { what: "the place given back" });
    const after = await t.openaiPost("/v1/responses", { model: "gpt-5", input: "hi" });
    assertEquals(after.status, 200);
    await after.body?.cancel();
  }, {
    maxConcurrent: 1,
    drawBytes: (count) => {
      drawn += count;
      return null;
    },
  });
});

Deno.test("an unrelayed path's body stops being read once the task's total is spent, and is still a 404", async () => {
  const TOTAL = "this task has written its limit; see runbook.md#task-write-limit";
  let drawn = 0;
  await withProxy(async (t) => {
    const body = "x".repeat(SENT);
    const answer = await t.openaiPost("/v1/nothing", body);
    assertEquals(answer.status, 404);
    assertStringIncludes((await answer.json()).error.message, "is not a request the box relays");
    assertEquals(t.proxy.active, 0);
  }, {
    drawBytes: (count) => {
      drawn += count;
      return drawn > 1000 ? TOTAL : null;
    },
  });
  assertEquals(drawn > 0, true);
});
