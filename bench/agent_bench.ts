/**
 * A task's model endpoint in a real core (issues 10 and 19): model requests per second from a worker
 * through tasks/<id>/model.sock, the socket the task init opens as ANTHROPIC_BASE_URL (the core puts
 * the vault's key on the request, relays it, redacts the answer, reads the usage and charges it),
 * streamed and whole. The baseline is the same request sent straight to the same scripted service
 * over HTTP, measured in the same run: what any relay adds to. (bench/model_proxy_bench.ts measures
 * the endpoint alone, without the core's charging.)
 *
 * The core syncs an audit cost record and a journal cost line for every whole cent charged, and the
 * scripted service answers in well under a millisecond, so the ratio is small by construction. The
 * target is about what a user feels: a real model answer takes 0.5 to 30 s, and a relay at 0.05 of
 * this baseline adds under 20 ms to each, about 1% or less of a turn.
 */
import { loadConfig } from "../mod/config/mod.ts";
import { Core } from "../mod/core/core.ts";
import { requestJson } from "../mod/net/mod.ts";
import { adminSocketPath } from "../mod/config/mod.ts";
import { exampleApp, ToolRegistry } from "../mod/tools/mod.ts";
import { startFakeModel } from "../tests/loop/fake_model.ts";
import { type BenchRow, printTable } from "./table.ts";
import { rate } from "./measure.ts";

const REPLY = { text: "A short answer of a few words, streamed in pieces." };

const model = startFakeModel(Array.from({ length: 1_000_000 }, () => REPLY));
const home = await Deno.makeTempDir({ prefix: "gurt-agent-bench-" });
await Deno.writeTextFile(
  `${home}/gurt.toml`,
  `[models]\nanthropic_base_url = "${model.url}"\n[broker]\nmax_task_bytes = 2000000000\n`,
);
const config = loadConfig({ home, env: { BOX_VAULT: `${home}/vault.env` }, root: false });
const core = await Core.start(config, {
  log: () => {},
  registry: new ToolRegistry(exampleApp),
  asRoot: false,
  vault: {
    value: (name) => (name === "ANTHROPIC_API_KEY" ? "sk-bench" : undefined),
    names: () => [],
  },
});
try {
  const started = await requestJson(adminSocketPath(home), {
    method: "POST",
    path: "/tasks",
    body: { worker: { kind: "none" }, tools: ["example.echo"] },
  });
  const id = (started.body as { task: { id: string } }).task.id;
  const client = Deno.createHttpClient({
    proxy: { transport: "unix", path: `${home}/tasks/${id}/model.sock` },
  });
  const body = (stream: boolean) =>
    JSON.stringify({
      model: "claude-sonnet-5-5",
      max_tokens: 100,
      stream,
      messages: [{ role: "user", content: "hello" }],
    });
  const headers = (key: string) => ({
    "content-type": "application/json",
    "x-api-key": key,
    "anthropic-version": "2023-06-01",
  });
  const relayed = (stream: boolean) => async () => {
    const response = await fetch("http://127.0.0.1/v1/messages", {
      method: "POST",
      client,
      headers: headers("gurt-placeholder-key"),
      body: body(stream),
    });
    await response.arrayBuffer();
  };
  const direct = (stream: boolean) => async () => {
    const response = await fetch(`${model.url}/v1/messages`, {
      method: "POST",
      headers: headers("sk-bench"),
      body: body(stream),
    });
    await response.arrayBuffer();
  };
  const rows: BenchRow[] = [];
  for (const stream of [true, false]) {
    const baseline = await rate(direct(stream));
    const value = await rate(relayed(stream));
    rows.push({
      what: `model requests through the task's model endpoint (${stream ? "streamed" : "whole"})`,
      unit: "req/s",
      value,
      baselineWhat: "the same request straight to the service",
      baseline,
      target: ">= 0.05",
    });
  }
  client.close();
  printTable(rows);
} finally {
  await core.close();
  await model.close();
  await Deno.remove(home, { recursive: true });
}
