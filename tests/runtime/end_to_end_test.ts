/**
 * End to end through a real core's task socket, with the real sandbox and the real fetcher: a read
 * of a granted file labelled secret raises the task's taint, and a later http_fetch whose grant
 * stops at private is denied with the taint text.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { denialText } from "../../mod/policy/mod.ts";
import { RUNTIME_UNAVAILABLE } from "../../mod/runtime/mod.ts";
import { grant, startBox } from "../kit/mod.ts";
import { ownTree } from "./helpers.ts";
import { startTlsServer } from "./tls_fixture.ts";

Deno.test("a secret read raises the taint, and a later http_fetch under a private grant is denied with the taint text", async () => {
  const server = await startTlsServer(() => new Response("public page"));
  const files = await Deno.makeTempDir({ prefix: "gurt-e2e-files-" });
  await Deno.writeTextFile(`${files}/token.txt`, "the secret token");
  await ownTree(files);
  const box = await startBox({
    grants: {
      "keys-read": grant({ tool: "read_file", paths: [files], result_class: "secret" }),
      "web": grant({ tool: "http_fetch", hosts: ["good.test"], max_taint: "private" }),
    },
    toml: '[runtime]\nallow_private_hosts = ["good.test"]\n',
    core: {
      runtimeOptions: {
        fetcher: {
          ca: server.ca,
          port: server.port,
          resolve: () => Promise.resolve(["127.0.0.1"]),
        },
      },
    },
  });
  try {
    const task = await box.startTask({ tools: ["read_file", "http_fetch"] });
    const before = await task.call("http_fetch", { url: "https://good.test/" }, "fetch-1");
    assertEquals(before.ok, true, JSON.stringify(before));
    assertStringIncludes(before.output.content, "public page");

    const read = await task.call("read_file", { path: `${files}/token.txt` }, "read-1");
    assertEquals(read, { ok: true, output: { content: "the secret token", truncated: false } });

    const after = await task.call("http_fetch", { url: "https://good.test/" }, "fetch-2");
    assertEquals(after, { ok: false, error: denialText("taint_too_high") });
    assertEquals(server.requests.length, 1);

    const results = (await box.records()).filter((r) => r.event.type === "result");
    assertEquals(results.map((r) => r.event.taint_after), ["private", "secret"]);
    const decisions = (await box.records()).filter((r) => r.event.type === "decision");
    assertEquals(decisions.at(-1).event.outcome, { outcome: "denied", reason: "taint_too_high" });
  } finally {
    await box.close();
    await server.close();
    await Deno.remove(files, { recursive: true });
  }
});

Deno.test("a core whose bubblewrap does not run says so at start and answers built-in calls with the runbook pointer", async () => {
  const files = await Deno.makeTempDir({ prefix: "gurt-e2e-files-" });
  await Deno.writeTextFile(`${files}/a.txt`, "text");
  const box = await startBox({
    grants: { "files-read": grant({ tool: "read_file", paths: [files] }) },
    core: { runtimeOptions: { bwrap: "/nonexistent/bwrap" } },
  });
  try {
    assertStringIncludes(box.core.notices.join("\n"), "see runbook.md#runtime-unavailable");
    const task = await box.startTask({ tools: ["read_file"] });
    const read = await task.call("read_file", { path: `${files}/a.txt` }, "read-1");
    assertEquals(read, { ok: false, error: RUNTIME_UNAVAILABLE });
    const results = (await box.records()).filter((r) => r.event.type === "result");
    assertEquals(results.map((r) => [r.event.status, r.event.taint_after]), [[
      "failed",
      "private",
    ]]);
  } finally {
    await box.close();
    await Deno.remove(files, { recursive: true });
  }
});
