/**
 * A request whose body the client does not send to its end is the client's fault, and the model
 * endpoint says so (issue 28): a 400 in the service's format saying the request ended before its
 * whole body arrived, nothing sent to the service. Before, it was a 502 blaming the model service
 * ("the model service at … could not be sent the request").
 */
import { assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { startFakeService } from "./fake_services.ts";
import { PLACEHOLDER, withProxy } from "./proxy_kit.ts";
import { sendCutShort } from "../kit/mod.ts";

/** Sends a POST to `path` that declares 1,000 bytes, sends 10, stops sending; reads the answer. */
function cutShort(socket: string, path: string): Promise<string> {
  return sendCutShort(socket, {
    path,
    headers: [
      "host: model.local",
      "content-type: application/json",
      "x-api-key: gurt-placeholder-key",
      "anthropic-version: 2023-06-01",
    ],
    start: '{"model":"',
  });
}

Deno.test("a model request whose body the client cuts short is a 400 saying the request was incomplete, and nothing is sent", async () => {
  await withProxy(async (t) => {
    const answer = await cutShort(t.proxy.socketPath, "/v1/messages");
    assertStringIncludes(answer.split("\r\n")[0], "400");
    assertStringIncludes(answer, "ended before its whole body arrived");
    assertStringIncludes(answer, "invalid_request_error");
    assertStringIncludes(answer, "see runbook.md#model-proxy-refused");
    assertNotIncludes(answer, "model service at");
    assertEquals(t.anthropic.requests.length, 0);
  });
});

Deno.test("a Factory request whose body breaks off is a 400 saying so, and Factory is sent nothing", async () => {
  const factory = startFakeService(() => ({ writes: ['{"ok":true}'] }));
  try {
    await withProxy(async (t) => {
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent) return controller.error(new Error("connection reset by peer (test)"));
          sent = true;
          controller.enqueue(new TextEncoder().encode('{"status":'));
        },
      });
      const request = new Request("https://api.factory.ai/api/ingest", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${PLACEHOLDER}` },
        body,
        duplex: "half",
      } as RequestInit);
      const answer = await t.proxy.factoryRequest(request);
      const text = await answer.text();
      assertEquals(answer.status, 400, text);
      assertStringIncludes(text, "ended before its whole body arrived");
    }, { factory: { baseUrl: factory.url, key: "fk-REAL-factory-key" } });
  } finally {
    await factory.close();
  }
  assertEquals(factory.requests.length, 0);
});
