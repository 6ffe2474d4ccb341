/** The agents' fake Anthropic service, as a person trying gurt runs it on its own. */
import { assertEquals } from "../assert.ts";
import { checkAnthropicKey } from "../../mod/vault/mod.ts";
import { startFakeAnthropic } from "../../mod/stand-in/anthropic.ts";

Deno.test("gurt's key check accepts a made-up key at the fake, so gurt vault set can save it", async () => {
  const fake = startFakeAnthropic();
  try {
    const check = await checkAnthropicKey("sk-ant-made-up-key-0001", {
      baseUrl: fake.url,
      timeoutMs: 5_000,
    });
    assertEquals(check, { kind: "accepted" });
    assertEquals(fake.requests.map((r) => [r.method, r.path, r.headers["x-api-key"]]), [
      ["GET", "/v1/models?limit=1", "sk-ant-made-up-key-0001"],
    ]);
    assertEquals(fake.messages(), []);
  } finally {
    await fake.close();
  }
});
