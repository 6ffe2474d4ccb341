/**
 * Seed 002 §12's end-to-end test, in processes: the real `gurt serve`, the real `gurt loop` worker it
 * starts, a scripted llama-style (OpenAI-compatible) model service, and the real `gurt task watch`.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { requestJson } from "../../mod/net/mod.ts";
import { grant, type Json } from "../core/harness.ts";
import { gurt, gurtArgs } from "../cli/gurt.ts";
import { type FakeModel, type ScriptedReply, startFakeModel } from "./fake_model.ts";

interface Served {
  home: string;
  /** What gurt serve printed. */
  stderr(): string;
  model: FakeModel;
  stop(): Promise<void>;
}

/** Starts `gurt serve` on a new home whose [models] is the fake llama server (no key). */
async function serve(script: ScriptedReply[], grants: Record<string, string>): Promise<Served> {
  const model = startFakeModel(script);
  const home = await Deno.makeTempDir({ prefix: "gurt-e2e-" });
  // As root, each task runs as its own user, who must traverse the home to reach its folder.
  await Deno.chmod(home, 0o711);
  await Deno.mkdir(`${home}/grants`);
  for (const [id, toml] of Object.entries(grants)) {
    await Deno.writeTextFile(`${home}/grants/${id}.toml`, toml);
  }
  await Deno.writeTextFile(
    `${home}/gurt.toml`,
    `[models]\nkind = "openai"\nbase_url = "${model.url}"\nmodel = "ornith-1.5"\nkey = ""\n`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["--home", home, "serve"]),
    env: { NO_COLOR: "1", BOX_VAULT: `${home}/vault.env` },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // Ready when the core says its admin socket is ready.
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("admin socket ready")) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`gurt serve stopped before it was ready: ${seen}`);
    seen += value;
  }
  const drained = (async () => {
    for (;;) {
      const { value, done } = await lines.read();
      if (done) break;
      seen += value;
    }
  })();
  return {
    home,
    model,
    stderr: () => seen,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drained;
      await model.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

/** Starts a loop task with `gurt task start` and returns its id. */
async function startLoop(box: Served, tools: string, prompt: string): Promise<string> {
  const args = ["--home", box.home, "task", "start", "--worker", "loop", "--tools", tools, prompt];
  const started = await gurt(args);
  assertEquals(started.code, 0, started.stderr + box.stderr());
  return started.stdout.trim();
}

/** Follows the task's journal until it ends; fails after `ms` rather than hang. */
async function ended(home: string, id: string, ms = 60_000): Promise<Json> {
  const socket = adminSocketPath(home);
  const deadline = Date.now() + ms;
  let after = 0;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`task ${id} did not end in ${ms} ms`);
    const page = (await requestJson(socket, {
      method: "GET",
      path: `/tasks/${id}/journal?after=${after}&wait=${left}`,
    })).body as Json;
    after = page.next;
    if (page.ended) return page;
  }
}

async function records(home: string): Promise<Json[]> {
  const out: Json[] = [];
  const names = [...Deno.readDirSync(`${home}/audit`)].map((e) => e.name).sort();
  for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
    const text = await Deno.readTextFile(`${home}/audit/${name}`);
    for (const line of text.split("\n")) if (line !== "") out.push(JSON.parse(line));
  }
  return out;
}

Deno.test("seed 002 §12: read_file with no grant; the next request holds the denial; the log verifies with one no_grant Decision", async () => {
  const box = await serve([
    {
      calls: [{
        name: "call_tool",
        input: { name: "read_file", input: { path: "/etc/hostname" } },
      }],
    },
    { text: "I may not read that file." },
  ], {});
  try {
    const id = await startLoop(box, "read_file", "read /etc/hostname");
    assertEquals((await ended(box.home, id)).state, "done");
    assertEquals(box.model.requests.length, 2);
    assertEquals(box.model.requests[0].path, "/v1/chat/completions");
    assertEquals(box.model.requests[0].body.model, "ornith-1.5");
    assertStringIncludes(box.model.requests[1].raw, "Denied: no grant allows this call.");
    const verified = await gurt(["--home", box.home, "audit", "verify"]);
    assertEquals(verified.code, 0, verified.stdout + verified.stderr);
    assertStringIncludes(verified.stdout, "audit: ok");
    const decisions = (await records(box.home)).filter((r) => r.event.type === "decision");
    assertEquals(decisions.length, 1);
    assertEquals(decisions[0].event.tool, "read_file");
    assertEquals(decisions[0].event.outcome, { outcome: "denied", reason: "no_grant" });
  } finally {
    await box.stop();
  }
});

Deno.test("an ask grant: the block appears in gurt task watch, typing the id approves, the call runs", async () => {
  const box = await serve([
    { calls: [{ name: "call_tool", input: { name: "example.spend", input: { cents: 5 } } }] },
    { text: "Paid \u001b[8mfive\u001b[0m cents." },
  ], { spend: grant({ tool: "example.spend", mode: "ask" }) });
  try {
    const id = await startLoop(box, "example.spend", "pay five cents");
    const watch = new Deno.Command(Deno.execPath(), {
      args: gurtArgs(["--home", box.home, "task", "watch", id]),
      env: { NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // A watch that shows no block, or never ends, is stopped so the test fails and does not hang.
    const guard = setTimeout(() => watch.kill("SIGKILL"), 60_000);
    const out = watch.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let shown = "";
    while (!shown.includes('\n    example.spend {"cents":5}\n')) {
      const { value, done } = await out.read();
      if (done) throw new Error(`gurt task watch ended before the block: ${shown}`);
      shown += value;
    }
    const reset = shown.indexOf("\u001b[0m");
    const approval = Number(shown.slice(reset + 4).split(" ")[0]);
    assert(Number.isSafeInteger(approval), `the block starts with the approval id: ${shown}`);
    const stdin = watch.stdin.getWriter();
    await stdin.write(new TextEncoder().encode(`${approval}\n`));
    await stdin.close();
    for (;;) {
      const { value, done } = await out.read();
      if (done) break;
      shown += value;
    }
    const status = await watch.status;
    clearTimeout(guard);
    const stderr = new TextDecoder().decode(await new Response(watch.stderr).arrayBuffer());
    assertEquals(status.code, 0, shown + stderr);
    assertStringIncludes(stderr, `type ${approval} to approve, anything else refuses`);
    assertStringIncludes(shown, `approved ${approval}: runs`);
    assertStringIncludes(shown, "Paid \\u001b[8mfive\\u001b[0m cents.");
    assertStringIncludes(box.model.requests[1].raw, '\\"paid\\":5');
    const types = (await records(box.home)).map((r) => r.event.type);
    assertEquals(types.filter((t) => ["decision", "approval", "result"].includes(t)), [
      "decision",
      "approval",
      "result",
    ]);
  } finally {
    await box.stop();
  }
});
