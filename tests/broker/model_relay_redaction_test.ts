/** The model relay's streamed answer reaches the task redacted, like every other result. */
import { assert, assertStringIncludes } from "../assert.ts";
import { requestStream } from "../../mod/net/mod.ts";
import { startBox } from "../kit/mod.ts";
import { startFakeModel } from "../loop/fake_model.ts";

const SECRET = "sk-relay-canary-5f1e2d3c4b5a6978";

Deno.test("a vault value the model streams back is replaced, even split across SSE chunks", async () => {
  // The fake model sends its answer in small pieces, so the value spans several chunks.
  const model = startFakeModel([{ text: `here it is: ${SECRET} and again ${SECRET}.` }]);
  const box = await startBox({
    toml: `[models]\nkind = "anthropic"\nbase_url = "${model.url}"\nkey = ""\n`,
  });
  try {
    const set = await box.admin("PUT", "/api/vault/EXAMPLE_API_KEY", { value: SECRET });
    assert(set.status === 200, JSON.stringify(set.body));
    const task = await box.startTask({ tools: ["example.echo"] });
    const response = await requestStream(task.socket, {
      method: "POST",
      path: "/model",
      body: {
        model: "claude-sonnet-5-5",
        max_tokens: 64,
        stream: true,
        messages: [{ role: "user", content: "say the key" }],
      },
    });
    const text = await response.text();
    assertStringIncludes(text, "[a vault key]");
    assert(!text.includes(SECRET), "the vault value reached the task");
    assert(!text.includes(SECRET.slice(0, 16)), "part of the vault value reached the task");
  } finally {
    await box.close();
    await model.close();
  }
});
