/** The model endpoint's streamed answer reaches the task redacted, like every other result. */
import { assert, assertStringIncludes } from "../assert.ts";
import { startFakeModel } from "../loop/fake_model.ts";
import { askModel, startEndpointBox } from "./scripted_service.ts";

const SECRET = "sk-relay-canary-5f1e2d3c4b5a6978";

Deno.test("a vault value the model streams back is replaced, even split across SSE chunks", async () => {
  // The fake model sends its answer in small pieces, so the value spans several chunks.
  const model = startFakeModel([{ text: `here it is: ${SECRET} and again ${SECRET}.` }]);
  const { box, task } = await startEndpointBox("anthropic", model, SECRET);
  try {
    const response = await askModel(task);
    const text = await response.text();
    assertStringIncludes(text, "[a vault key]");
    assert(!text.includes(SECRET), "the vault value reached the task");
    assert(!text.includes(SECRET.slice(0, 16)), "part of the vault value reached the task");
  } finally {
    await box.close();
    await model.close();
  }
});
