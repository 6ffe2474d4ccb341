/**
 * The canary test of issue 6: canary keys in the vault, every broker request and owner command of
 * the suite's flows (tools echoing their secret raw, base64, URL-encoded and hex among them), then
 * every file under the box home, every answer and everything printed is scanned: no canary value,
 * in any of those encodings, appears anywhere.
 */
import { Buffer } from "node:buffer";
import { z } from "zod";
import { assert, assertEquals } from "../assert.ts";
import { defineTool } from "../../mod/tools/mod.ts";
import { grant, gurt, type GurtRun, pendingApproval, startBox, until } from "../kit/mod.ts";
import { startFakeAnthropic } from "./fake_anthropic.ts";
import { putKey, vaultFolder } from "./helpers.ts";

const CANARIES: Record<string, string> = {
  CANARY_API_KEY: "canary-api-key-6f1d2b9e",
  CANARY_TOKEN: "canary+tok/en?=9a8b&x y",
  CANARY_PASSWORD: "pässwörd-canary-42",
  ANTHROPIC_API_KEY: "sk-ant-api03-canary-anthropic-key-0042",
  CLI_SET_SECRET: "cli-set-canary-secret-77",
};

const ENCODINGS = ["raw", "base64", "base64url", "url", "hex", "json"] as const;

function encode(value: string, encoding: (typeof ENCODINGS)[number]): string {
  const bytes = Buffer.from(value, "utf-8");
  switch (encoding) {
    case "raw":
      return value;
    case "base64":
      return bytes.toString("base64");
    case "base64url":
      return bytes.toString("base64url");
    case "url":
      return encodeURIComponent(value);
    case "hex":
      return bytes.toString("hex");
    case "json":
      return JSON.stringify({ leaked: value });
  }
}

/** Every text that would betray a canary: each value in each encoding a tool echoes it in. */
function needles(): string[] {
  const out = new Set<string>();
  for (const value of Object.values(CANARIES)) {
    for (const encoding of ENCODINGS) if (encoding !== "json") out.add(encode(value, encoding));
  }
  return [...out];
}

/** A tool that reads every canary and echoes the one asked for, in the encoding asked for. */
const leak = defineTool({
  name: "canary.leak",
  description: "Echoes a vault key it declares (test only: a tool that must never exist).",
  input: z.strictObject({
    name: z.string(),
    encoding: z.enum(ENCODINGS),
    how: z.enum(["result", "key", "throw"]).default("result"),
  }),
  secrets: Object.keys(CANARIES),
  run: (ctx, input) => {
    const text = encode(ctx.secret(input.name), input.encoding);
    if (input.how === "throw") return Promise.reject(new Error(`upstream said: bad key ${text}`));
    if (input.how === "key") return Promise.resolve({ [text]: true });
    return Promise.resolve({ echoed: text, nested: [{ again: text }] });
  },
});

Deno.test("canary: no vault value leaves the core, in any encoding, by any request or command", async () => {
  const fake = startFakeAnthropic([CANARIES.ANTHROPIC_API_KEY]);
  const { CLI_SET_SECRET: _cli, ANTHROPIC_API_KEY: _anthropic, ...inFile } = CANARIES;
  const folder = await vaultFolder(
    Object.entries(inFile).map(([name, value]) => `${name}=${value}\n`).join(""),
  );
  const box = await startBox({
    env: { BOX_VAULT: folder.path },
    toml: `[vault]\nanthropic_base_url = "${fake.baseUrl}"\n[approvals]\nwait_ms = 60000\n`,
    tools: [leak as never],
    grants: {
      leak: grant({ tool: "canary.leak" }),
      echo: grant({ tool: "example.echo" }),
      spend: grant({ tool: "example.spend", mode: "ask" }),
    },
  });
  const seen: string[] = [];
  const printed: GurtRun[] = [];
  const env = { BOX_VAULT: folder.path };
  const cli = async (args: string[], stdin?: string): Promise<GurtRun> => {
    const run = await gurt(["--home", box.home, ...args], { env, stdin });
    printed.push(run);
    return run;
  };
  try {
    // Owner: keys set over the API and the CLI while the box runs.
    await putKey(box, "ANTHROPIC_API_KEY", CANARIES.ANTHROPIC_API_KEY);
    assertEquals(
      (await cli(["vault", "set", "CLI_SET_SECRET"], `${CANARIES.CLI_SET_SECRET}\n`)).code,
      0,
    );
    const task = await box.startTask({ tools: ["canary.leak", "example.echo", "example.spend"] });
    const ask = async (method: "GET" | "POST", path: string, body?: unknown) => {
      const answer = await task.request(method, path, body);
      seen.push(JSON.stringify(answer));
      return answer;
    };
    const call = async (tool: string, input: unknown, key: string) => {
      const answer = await task.call(tool, input, key);
      seen.push(JSON.stringify(answer));
      return answer;
    };
    // Every tool call: each key in each encoding, as a result, an object key and an error.
    let n = 0;
    for (const name of Object.keys(CANARIES)) {
      for (const encoding of ENCODINGS) {
        for (const how of ["result", "key", "throw"]) {
          const answer = await call("canary.leak", { name, encoding, how }, `leak-${n++}`);
          assert(JSON.stringify(answer).includes("[a vault key]"), JSON.stringify(answer));
        }
      }
    }
    // A worker that learnt a value somehow: in inputs, steps, questions, costs, usage.
    for (const [i, value] of Object.values(CANARIES).entries()) {
      await call("example.echo", { text: `echo ${value}` }, `echo-${i}`);
      await ask("POST", "/step", { text: `step ${value}`, data: { value, [value]: [value] } });
      await ask("POST", "/cost", { cents: 1, what: `cost ${value}` });
      await ask("POST", "/usage", {
        model: "claude-haiku-4-5",
        what: `usage ${value}`,
        tokens: { input: 10, output: 1 },
      });
    }
    // An error that quotes what the task sent: an unknown field named after a value.
    for (const value of Object.values(CANARIES)) {
      const refused = await ask("POST", "/step", { text: "x", [value]: 1 });
      assertEquals(refused.status, 400);
    }
    await ask("GET", "/task");
    await ask("GET", "/tools");
    // An /ask and a spend waiting for approval, with values in them, answered by the owner's CLI.
    const value = CANARIES.CANARY_API_KEY;
    const question = ask("POST", "/ask", { question: `may I? ${value}`, key: "q1", payee: value });
    const approvalId = await pendingApproval(box, task);
    printed.push(await cli(["approvals"]));
    seen.push(JSON.stringify(await box.admin("GET", "/approvals")));
    assertEquals((await cli(["approve", String(approvalId)])).code, 0);
    assertEquals((await question).body, { approved: true });
    const spend = call("example.spend", { cents: 5, payee: `payee ${value}` }, "spend-1");
    const spendId = await pendingApproval(box, task);
    seen.push(JSON.stringify(await box.admin("GET", "/approvals")));
    await cli(["approvals"]);
    await cli(["refuse", String(spendId), "--reason", `no, ${value}`]);
    await spend;
    // A task started with a value in its prompt, run by the real test worker, which echoes results.
    const script = `${folder.dir}/script.txt`;
    await Deno.writeTextFile(
      script,
      [
        `POST /call {"tool":"canary.leak","input":{"name":"CANARY_TOKEN","encoding":"hex"},"key":"w1"}`,
        `POST /step {"text":"worker step ${CANARIES.CANARY_PASSWORD}"}`,
      ].join("\n") + "\n",
    );
    const started = await cli([
      "task",
      "start",
      `prompt with ${CANARIES.CANARY_TOKEN}`,
      "--script",
      script,
      "--tools",
      "canary.leak",
    ]);
    assertEquals(started.code, 0, started.stderr);
    const workerTask = started.stdout.trim();
    await until(async () => {
      const shown = await box.admin("GET", `/tasks/${workerTask}`);
      return shown.body.task.state === "done" || shown.body.task.state === "failed";
    }, 20_000);
    // Every owner command of the flows, printed.
    seen.push(JSON.stringify(await box.admin("GET", "/tasks")));
    seen.push(JSON.stringify(await box.admin("GET", `/tasks/${task.id}`)));
    seen.push(JSON.stringify(
      await box.admin("POST", `/tasks/${task.id}/stop`, {
        reason: `stop ${value}`,
      }),
    ));
    for (
      const args of [
        ["task", "list"],
        ["task", "show", task.id],
        ["task", "show", workerTask],
        ["vault", "list"],
        ["vault", "deny", "canary", "CANARY_TOKEN"],
        ["vault", "list"],
        ["vault", "allow", "canary", "CANARY_TOKEN"],
        ["vault", "rm", "CLI_SET_SECRET"],
        ["grants", "check"],
        ["audit", "verify"],
        ["config"],
      ]
    ) {
      const run = await cli(args);
      // The CLI's own registry lacks the test-only canary app, so grants check reports its grant.
      if (args[0] !== "grants") assertEquals(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
    }
    seen.push(JSON.stringify(await box.admin("GET", "/api/vault")));
    // The removed key is still a canary: it was a value of the vault, now in old records.
    // Scan: every file under the home, every answer, everything printed, every core log line.
    const haystacks: [string, string][] = [];
    for await (const file of walk(box.home)) {
      haystacks.push([file, new TextDecoder().decode(await Deno.readFile(file))]);
    }
    seen.forEach((text, i) => haystacks.push([`answer ${i}`, text]));
    printed.forEach((run, i) => haystacks.push([`printed ${i}`, run.stdout + run.stderr]));
    haystacks.push(["core log", box.logs.join("\n")]);
    assert(haystacks.length > 20, "too little was scanned");
    const files = haystacks.filter(([where]) => where.startsWith(box.home)).map(([w]) => w);
    assert(files.some((file) => file.endsWith("journal.jsonl")), "no journal scanned");
    assert(files.some((file) => file.endsWith("worker.log")), "no worker log scanned");
    assert(files.some((file) => file.includes("/audit/")), "no audit file scanned");
    const leaks: string[] = [];
    for (const [where, text] of haystacks) {
      for (const needle of needles()) if (text.includes(needle)) leaks.push(`${where}: ${needle}`);
    }
    assertEquals(leaks, []);
    // And the redaction happened where the values were: the markers are there instead.
    const journal = await Deno.readTextFile(`${box.home}/tasks/${task.id}/journal.jsonl`);
    assert(journal.includes("[a vault key]"));
  } finally {
    await box.close().catch(() => {});
    await fake.close();
    await folder.remove();
  }
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* walk(path);
    else if (entry.isFile) yield path;
  }
}
