/**
 * Audit before action holds for the model endpoint, as the core wires it (issue 28): once the
 * audit log cannot be written (here every write fails, as on a full disk), no model request leaves
 * with the vault's key: each is a 503 in the service's format with the runbook pointer, and the
 * service sees nothing. A whole answer whose charge the log could not take is not given (503), so
 * its cost is never spent unrecorded. Before, both went on and the cost was only logged as lost.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { startFakeModel } from "../loop/fake_model.ts";
import { postModel, startFailingBox } from "./task_endpoint.ts";

const KEY = "sk-ant-audit-down-test";

const BODY = {
  model: "claude-sonnet-5-5",
  max_tokens: 16,
  messages: [{ role: "user", content: "hi" }],
};

Deno.test("while the audit log cannot be written, a task's model request is a 503 with the runbook pointer and never reaches the service", async () => {
  const model = startFakeModel([{ text: "one" }, { text: "two" }]);
  let failing = false;
  const box = await startFailingBox(model.url, { fail: () => failing, key: KEY });
  try {
    const task = await box.startTask({ tools: [] });
    assertEquals((await postModel(task, BODY)).status, 200);
    assertEquals(model.requests.length, 1);
    failing = true;
    // A tool call, or here a reported cost, finds the log unwritable first.
    const cost = await task.request("POST", "/cost", { cents: 1, what: "x" });
    assertEquals(cost.status >= 500, true, JSON.stringify(cost));
    const refused = await postModel(task, BODY);
    assertEquals(refused.status, 503, JSON.stringify(refused.body));
    assertEquals(refused.body.error.type, "api_error");
    assertStringIncludes(refused.body.error.message, "audit log cannot be written");
    assertStringIncludes(refused.body.error.message, "see runbook.md#audit-unavailable");
    assertEquals(model.requests.length, 1);
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("a whole answer whose charge the audit log cannot take is not given: a 503, the cost never spent unrecorded", async () => {
  // 1,000,000 input tokens of claude-sonnet-5-5 are 300 cents: a charge is due at once.
  const model = startFakeModel([{ text: "costly", usage: { input: 1_000_000, output: 10 } }]);
  let failing = false;
  const box = await startFailingBox(model.url, { fail: () => failing, key: KEY });
  try {
    const task = await box.startTask({ tools: [] });
    failing = true;
    const answer = await postModel(task, BODY);
    assertEquals(answer.status, 503, JSON.stringify(answer.body));
    assertStringIncludes(answer.body.error.message, "could not record this answer's cost");
    assertEquals(JSON.stringify(answer.body).includes("costly"), false);
    assertEquals(model.requests.length, 1);
    assertStringIncludes(box.logs.join("\n"), "answer was not recorded");
  } finally {
    await box.close();
    await model.close();
  }
});
