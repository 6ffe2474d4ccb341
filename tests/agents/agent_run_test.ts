/**
 * `gurt agent-run`'s parts: the settings files it writes into a task's home without following a
 * link, the steps it keeps and reads back, its role's narrowed permissions, the sentence for a
 * missing agent; `gurt task start`'s agent workers; and the prompt a cmd worker gets as BOX_PROMPT.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import {
  adapterOf,
  type AgentAdapter,
  agentBinary,
  AGENTS_DIR,
  missingAgent,
} from "../../mod/agents/mod.ts";
import { AgentFileError, writeAgentFiles } from "../../mod/agents/agent_run_files.ts";
import { exitStatus, finalStep, keptRun, sessionStep } from "../../mod/agents/agent_run_steps.ts";
import { ROLE_TABLE, runRole } from "../../mod/roles/mod.ts";
import { gurt, startBox, taskEnd, withHome } from "../kit/mod.ts";
import type { ProbeArgs } from "../roles/probe.ts";

const uid = Deno.uid()!;

Deno.test("agent-run writes each settings file 0600 in folders it makes 0700, replacing what was there", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/.codex`);
    await Deno.writeTextFile(`${home}/.codex/config.toml`, "old");
    await writeAgentFiles(home, {
      ".config/gurt/claude-mcp.json": "{}\n",
      ".codex/config.toml": "new",
    }, { uid });
    assertEquals(await Deno.readTextFile(`${home}/.config/gurt/claude-mcp.json`), "{}\n");
    assertEquals(await Deno.readTextFile(`${home}/.codex/config.toml`), "new");
    assertEquals((await Deno.stat(`${home}/.config/gurt/claude-mcp.json`)).mode! & 0o777, 0o600);
    assertEquals((await Deno.stat(`${home}/.config`)).mode! & 0o777, 0o700);
    assertEquals((await Deno.stat(`${home}/.config/gurt`)).mode! & 0o777, 0o700);
    // Nothing is left beside them: each was written under another name and renamed.
    assertEquals([...Deno.readDirSync(`${home}/.codex`)].map((e) => e.name), ["config.toml"]);
  });
});

Deno.test("agent-run replaces a link at a settings file's place and never writes through it", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/home/.config/gurt`, { recursive: true });
    await Deno.writeTextFile(`${home}/elsewhere`, "keep me");
    await Deno.symlink(`${home}/elsewhere`, `${home}/home/.config/gurt/claude-mcp.json`);
    await writeAgentFiles(`${home}/home`, { ".config/gurt/claude-mcp.json": "{}" }, { uid });
    assertEquals(await Deno.readTextFile(`${home}/elsewhere`), "keep me");
    const placed = await Deno.lstat(`${home}/home/.config/gurt/claude-mcp.json`);
    assert(placed.isFile && !placed.isSymlink);
  });
});

Deno.test("agent-run refuses a link, a file or another user's folder on a settings file's way, naming it", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/home`);
    await Deno.mkdir(`${home}/outside`);
    await Deno.symlink(`${home}/outside`, `${home}/home/.config`);
    await Deno.writeTextFile(`${home}/home/.codex`, "a file");
    const refused = async (files: Record<string, string>, words: string) => {
      const error = await assertRejects(
        () => writeAgentFiles(`${home}/home`, files, { uid }),
        AgentFileError,
      );
      assertStringIncludes((error as Error).message, words);
      assertStringIncludes((error as Error).message, "see runbook.md#agent-settings-refused");
    };
    await refused({ ".config/gurt/claude-mcp.json": "{}" }, `${home}/home/.config is a link`);
    await refused({ ".codex/config.toml": "x" }, `${home}/home/.codex is not a folder`);
    await refused({ "../escape.json": "x" }, "is not a plain path under its home");
    await refused({ "/etc/x": "x" }, "is not a plain path under its home");
    assertEquals([...Deno.readDirSync(`${home}/outside`)], []);
    if (uid === 0) {
      await Deno.mkdir(`${home}/home/.factory`);
      await Deno.chown(`${home}/home/.factory`, 65534, 65534);
      await refused({ ".factory/mcp.json": "{}" }, "belongs to uid 65534");
      // Nor is the home itself taken on trust.
      await Deno.chown(`${home}/home`, 65534, 65534);
      await refused({ "a.json": "{}" }, `${home}/home belongs to uid 65534`);
    }
  });
});

Deno.test("agent-run's steps: the kept session, the final answer, and the status a restart ends with", () => {
  const steps = [
    { data: null },
    sessionStep("claude", "s-1"),
    { data: { loop: {} } },
    sessionStep("codex", "other"),
  ];
  assertEquals(keptRun(steps, "claude"), { session: "s-1", final: null });
  const outcome = { session: "s-1", answer: "FINAL: done", ok: true };
  const last = finalStep("claude", { outcome, session: "s-1", code: 0 });
  assertEquals(last.text, "FINAL: done");
  assertEquals(keptRun([...steps, last], "claude"), {
    session: "s-1",
    final: { ok: true, code: 0 },
  });
  // Without an answer, the step says so and where the output went.
  const failed = finalStep("claude", {
    outcome: { session: null, answer: null, ok: false },
    session: "s-1",
    code: 3,
  });
  assertStringIncludes(failed.text, "claude ended with status 3 and gave no final answer");
  assertEquals(failed.data.agent.session, "s-1");
  assertEquals(exitStatus({ session: null, answer: null, ok: false }, 3), 3);
  assertEquals(exitStatus({ session: null, answer: "no", ok: false }, 0), 1);
  assertEquals(exitStatus({ session: null, answer: "yes", ok: true }, 0), 0);
});

Deno.test("a missing agent's sentence names its package, version, ./install.sh and the runbook", async () => {
  const claude = adapterOf("claude");
  const gone: AgentAdapter = { ...claude, package: { ...claude.package, bin: "no/such/binary" } };
  const text = await missingAgent(gone);
  assert(text !== null);
  assertStringIncludes(text, `${AGENTS_DIR}/claude/no/such/binary is missing`);
  assertStringIncludes(text, "@anthropic-ai/claude-code@2.1.332");
  assertStringIncludes(text, "./install.sh");
  assertStringIncludes(text, "see runbook.md#agent-missing");
  const installed = await Deno.stat(agentBinary(claude)).then(() => true, () => false);
  if (installed) assertEquals(await missingAgent(claude), null);
});

const probe = new URL("../roles/probe.ts", import.meta.url);

Deno.test("the agent-run role runs only its agent's binary and reaches only its socket: no vault, no other program, no environment", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/tasks/t1/home`, { recursive: true });
    await Deno.writeTextFile(`${home}/vault.env`, "K=v\n", { mode: 0o600 });
    await Deno.writeTextFile(`${home}/agent`, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const row = ROLE_TABLE["agent-run"];
    const permissions = row.permissions({
      socket: `${home}/tasks/t1/broker.sock`,
      home: `${home}/tasks/t1/home`,
      agentDir: `${home}/agents/claude`,
      binary: `${home}/agent`,
    });
    const attempt = (args: ProbeArgs) =>
      runRole({ role: row.role, permissions, entry: probe, args });
    assertEquals(await attempt({ act: "run", target: `${home}/agent` }), 0);
    assertEquals(await attempt({ act: "write", target: `${home}/tasks/t1/home/x` }), 0);
    assertEquals(await attempt({ act: "read", target: `${home}/vault.env` }), 13);
    assertEquals(await attempt({ act: "run", target: "/bin/sh" }), 13);
    assertEquals(await attempt({ act: "write", target: `${home}/tasks/t1/x` }), 13);
    assertEquals(await attempt({ act: "net", target: `${home}/tasks/t2/broker.sock` }), 13);
    assertEquals(await attempt({ act: "tcp", target: "127.0.0.1:4100" }), 13);
    assertEquals(await attempt({ act: "env", target: "HOME" }), 13);
  });
});

Deno.test("gurt task start names the agent workers, and refuses another", async () => {
  await withHome(async (home) => {
    const run = await gurt(["--home", home, "task", "start", "--worker", "claud", "hi"]);
    assertEquals(run.code, 1);
    assertStringIncludes(
      run.stderr,
      "--worker must be test, loop, claude, codex, droid, opencode, cmd or none",
    );
    const help = await gurt(["task", "start", "--help"]);
    assertStringIncludes(help.stdout, "claude, codex, droid or opencode");
  });
});

Deno.test("a cmd worker gets the task's prompt as BOX_PROMPT", async () => {
  const box = await startBox();
  try {
    const prompt = "tidy the notes; don't touch 'drafts'\nsecond line";
    const answer = await box.admin("POST", "/tasks", {
      prompt,
      worker: { kind: "cmd", command: ["/bin/sh", "-c", 'printf "<%s>" "$BOX_PROMPT"'] },
      tools: ["example.echo"],
    });
    assertEquals(answer.status, 200, JSON.stringify(answer.body));
    const { task, log } = await taskEnd(box, answer.body.task.id, 30_000);
    assertEquals(task.state, "done", log);
    assertStringIncludes(log, `<${prompt}>`);
  } finally {
    await box.close();
  }
});
