/**
 * A request whose body the client does not send to its end is the client's fault, and the portal
 * says so (issue 28): a 400 `{error}` saying the request ended before its whole body arrived, where
 * it was a 500 "the portal could not answer this request".
 */
import { assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { startPortalBox } from "./helpers.ts";
import { sendCutShort } from "../kit/mod.ts";

/** Sends a POST to `path` that declares 1,000 bytes, sends 10, stops sending; reads the answer. */
function cutShort(addr: string, path: string, head: string[]): Promise<string> {
  const [hostname, port] = addr.split(":");
  return sendCutShort({ hostname, port: Number(port) }, {
    path,
    headers: [`host: ${addr}`, ...head, "content-type: application/json"],
    start: '{"value":"',
  });
}

Deno.test("a portal request whose body the client cuts short is a 400 {error} saying the request was incomplete", async () => {
  const t = await startPortalBox({ vault: true });
  try {
    const token = (await Deno.readTextFile(`${t.box.home}/portal/owner.token`)).trim();
    const answer = await cutShort(t.portal.addr, "/api/vault/K", [
      `authorization: Bearer ${token}`,
    ]);
    const [head, body] = answer.split("\r\n\r\n");
    assertStringIncludes(head.split("\r\n")[0], "400", answer);
    const error = JSON.parse(body).error as string;
    assertStringIncludes(error, "ended before its whole body arrived");
    assertNotIncludes(answer, "could not answer");
    assertEquals(t.box.logs.filter((line) => line.includes("failed")), []);
  } finally {
    await t.close();
  }
});
