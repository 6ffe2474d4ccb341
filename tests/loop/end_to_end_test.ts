/**
 * The end-to-end test, in processes: the real `gurt serve`, the real `gurt loop` worker it starts,
 * a scripted llama-style (OpenAI-compatible) model service, and the real `gurt task watch`.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import {
  auditRecords,
  grant,
  grantFiles,
  gurt,
  gurtCommand,
  type Json,
  makeHome,
  readUntil,
  startServe,
  taskEnded,
} from "../kit/mod.ts";
import { type FakeModel, type ScriptedReply, startFakeModel } from "./fake_model.ts";

interface Served {
  home: string;
  /** What gurt serve printed. */
  stderr(): string;
  model: FakeModel;
  stop(): Promise<void>;
}

/**
 * Starts `gurt serve` on a new home whose OpenAI service is the fake llama server, with a key in the
 * vault that the server ignores (a task's model endpoint sends none without one).
 */
async function serve(script: ScriptedReply[], grants: Record<string, string>): Promise<Served> {
  const model = startFakeModel(script);
  const home = await makeHome({
    prefix: "gurt-e2e-",
    dirs: ["grants"],
    files: {
      ...grantFiles(grants),
      "gurt.toml": `[models]\nopenai_base_url = "${model.url}"\nmodel = "ornith-1.5"\n`,
      "vault.env": { text: "OPENAI_API_KEY=sk-local-llama-ignores-it\n", mode: 0o600 },
    },
  });
  // As root, each task runs as its own user, who must traverse the home to reach its folder.
  await Deno.chmod(home, 0o711);
  const served = await startServe(home, { env: { BOX_VAULT: `${home}/vault.env` } });
  if (served.exited !== null) {
    throw new Error(`gurt serve stopped before it was ready: ${served.stderr()}`);
  }
  return {
    home,
    model,
    stderr: served.stderr,
    async stop() {
      await served.stop();
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
function ended(home: string, id: string, ms = 60_000): Promise<Json> {
  return taskEnded(adminSocketPath(home), id, ms);
}

Deno.test("end to end: read_file with no grant; the next request holds the denial; the log verifies with one no_grant Decision", async () => {
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
    const decisions = (await auditRecords(box.home)).filter((r) => r.event.type === "decision");
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
    const watch = gurtCommand(["--home", box.home, "task", "watch", id], { stdin: "piped" })
      .spawn();
    // A watch that shows no block, or never ends, is stopped so the test fails and does not hang.
    const guard = setTimeout(() => watch.kill("SIGKILL"), 60_000);
    const block = '\n    example.spend {"cents":5}\n';
    const read = await readUntil(watch.stdout, (text) => text.includes(block));
    let shown = read.text;
    if (!shown.includes(block)) throw new Error(`gurt task watch ended before the block: ${shown}`);
    const reset = shown.indexOf("\u001b[0m");
    const approval = Number(shown.slice(reset + 4).split(" ")[0]);
    assert(Number.isSafeInteger(approval), `the block starts with the approval id: ${shown}`);
    const stdin = watch.stdin.getWriter();
    await stdin.write(new TextEncoder().encode(`${approval}\n`));
    await stdin.close();
    shown += await read.rest;
    const status = await watch.status;
    clearTimeout(guard);
    const stderr = new TextDecoder().decode(await new Response(watch.stderr).arrayBuffer());
    assertEquals(status.code, 0, shown + stderr);
    assertStringIncludes(stderr, `type ${approval} to approve, n to refuse`);
    assertStringIncludes(shown, `approved ${approval}: runs`);
    assertStringIncludes(shown, "Paid \\u001b[8mfive\\u001b[0m cents.");
    assertStringIncludes(box.model.requests[1].raw, '\\"paid\\":5');
    const types = (await auditRecords(box.home)).map((r) => r.event.type);
    assertEquals(types.filter((t) => ["decision", "approval", "result"].includes(t)), [
      "decision",
      "approval",
      "result",
    ]);
  } finally {
    await box.stop();
  }
});
