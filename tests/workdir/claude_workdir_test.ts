/**
 * Claude Code in a workdir (issue 35): the real CLI as a task's worker (`gurt task start --worker
 * claude --workdir PATH`), as root, against the scripted fake Anthropic service. Through its own
 * tools it edits a file of the owner's git repository and commits it there: the change and the
 * commit are on the host, the folder owner's, and `git log` shows them; its Write of
 * `.git/hooks/pre-commit` fails, and the hook is not there.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type Json } from "../kit/mod.ts";
import { claudeSkip, withClaudeBox } from "../agents/claude_box.ts";
import { events, makeOwnerTree, OWNER, ownerOf, sh } from "./workdir_kit.ts";
import type { AgentBox } from "../agents/agent_box.ts";
import type { FakeAnthropic } from "../../mod/stand-in/anthropic.ts";

const skip = claudeSkip();
if (skip !== null) console.log(`skipping the Claude Code workdir tests: ${skip}`);

/** Starts Claude Code with `--workdir`, checked: the task's id. */
async function startIn(claude: AgentBox, workdir: string): Promise<string> {
  const started = await claude.cli([
    "task",
    "start",
    "--worker",
    "claude",
    "--tools",
    "example.echo",
    "--workdir",
    workdir,
    "Work on the shop.",
  ]);
  assertEquals(started.code, 0, started.stderr);
  return started.stdout.trim().split("\n").at(-1) ?? "";
}

/**
 * Waits for the task's end, approving as the owner (gurt approve N) each permission Claude Code
 * asks for its own tools in the folder (a compound Bash command, a Write).
 */
async function endApproving(
  claude: AgentBox,
  id: string,
): Promise<{ task: Json; log: string; journal: Json[] }> {
  const approved = new Set<number>();
  let ended = false;
  const approving = (async () => {
    while (!ended) {
      const items = (await claude.box.admin("GET", "/approvals")).body.items as Json[];
      for (const item of items.filter((i) => i.task === id && !approved.has(i.approval))) {
        approved.add(item.approval);
        const said = await claude.cli(["approve", String(item.approval)]);
        assertEquals(said.code, 0, said.stderr);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    return await claude.end(id);
  } finally {
    ended = true;
    await approving;
  }
}

/** The text of every tool result Claude Code sent the model. */
function toolResults(claude: AgentBox & { fake: FakeAnthropic }): string {
  const out: string[] = [];
  for (const request of claude.fake.messages()) {
    for (const message of request.body.messages ?? []) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content) {
        if (block?.type === "tool_result") out.push(JSON.stringify(block.content));
      }
    }
  }
  return out.join("\n");
}

const COMMIT = [
  "sed -i 's/hi/hello from claude/' src/app.py",
  "git add src/app.py",
  "git -c user.name=claude -c user.email=claude@example.com commit -q -m 'greet from claude'",
  "echo planted > .git/hooks/pre-commit 2>&1 || echo HOOK-REFUSED",
  "git log --oneline | cat",
].join(" && ");

Deno.test({
  name:
    "Claude Code edits a file in its workdir and commits it: the change and the commit are on the host, the owner's, git log shows it, and .git/hooks/pre-commit could not be written",
  ignore: skip !== null,
  fn: async () => {
    const tree = await makeOwnerTree();
    const grants = {
      echo: grant({ tool: "example.echo" }),
      shop: grant({ tool: "task.workdir", paths: [tree.code] }),
    };
    try {
      await withClaudeBox({ grants, fake: { bash: COMMIT } }, async (claude) => {
        const id = await startIn(claude, tree.shop);
        const { task, log, journal } = await endApproving(claude, id);
        assertEquals(task.state, "done", log);
        // The model saw the commit, and the hook's refusal, in Bash's result.
        const results = toolResults(claude);
        assertStringIncludes(results, "greet from claude", results);
        assertStringIncludes(results, "HOOK-REFUSED", results);
        // On the host: the file changed, the commit in git log, both the owner's.
        assertEquals(
          await Deno.readTextFile(`${tree.shop}/src/app.py`),
          'print("hello from claude")\n',
        );
        const logged = await sh(`git -c safe.directory='*' log --format='%an %s' | cat`, tree.shop);
        assertEquals(logged.trim().split("\n"), ["claude greet from claude", "alice first"]);
        assertEquals(ownerOf(`${tree.shop}/src/app.py`), OWNER);
        const objects = await sh(
          `find ${tree.shop}/.git -newer ${tree.shop}/.env -printf '%u %p\\n'`,
        );
        assert(objects.trim() !== "", "the commit wrote into .git");
        for (const line of objects.trim().split("\n")) {
          assert(line.startsWith(`${OWNER} `), line);
        }
        assertEquals(
          await Deno.lstat(`${tree.shop}/.git/hooks/pre-commit`).catch(() => null),
          null,
        );
        // The summary of its writes names the file it changed.
        const [writes] = events(journal, "workdir.writes");
        assert(
          writes.files.changed.some((f: { path: string }) => f.path === "src/app.py"),
          JSON.stringify(writes),
        );
        const shown = await claude.cli(["task", "show", id]);
        assertStringIncludes(shown.stdout, `workdir ${tree.shop} (writable, grant auto)`);
      });
      // Its own Write tool on the hook: refused, the hook not there.
      const write = {
        name: "Write",
        input: {
          file_path: `${tree.shop}/.git/hooks/pre-commit`,
          content: "#!/bin/sh\necho evil\n",
        },
      };
      await withClaudeBox({ grants, fake: { tool: write } }, async (claude) => {
        const id = await startIn(claude, tree.shop);
        const { task, log } = await endApproving(claude, id);
        assertEquals(task.state, "done", log);
        const results = toolResults(claude);
        assert(/EROFS|read-only file system/i.test(results), results.slice(-2000));
        assertEquals(
          await Deno.lstat(`${tree.shop}/.git/hooks/pre-commit`).catch(() => null),
          null,
        );
      });
    } finally {
      await Deno.remove(tree.top, { recursive: true });
    }
  },
});
