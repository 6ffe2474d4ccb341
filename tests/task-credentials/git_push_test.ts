/**
 * A real `git clone` and `git push` of a task over HTTPS (issue 32), to a git server that wants
 * HTTP Basic `x-access-token:TOKEN` (git http-backend behind TLS with its own CA), reached by name
 * through [egress] resolve. The task holds only the placeholder, which git gets from the helper
 * the box configured; the core decides each request as a call of http.request, puts the vault's
 * token in its place, and the push lands. The token is nowhere in the task.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type Json, taskEnd } from "../kit/mod.ts";
import { recordsOf, ruleFor, startCredentialBox } from "./credential_box.ts";

const HOST = "git.gurt.test";
// Made at run time: no file the task can see holds it.
const TOKEN = `ghp_canary${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;

Deno.test({
  name:
    "git clone and git push of a task over HTTPS carry the vault's token in the placeholder's place, each request a decided http.request call",
  ignore: Deno.uid() !== 0,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    let port = 0;
    const cb = await startCredentialBox({
      hosts: [HOST],
      token: TOKEN,
      vault: { GIT_TOKEN: TOKEN },
      grants: {},
    });
    try {
      const origin = cb.origins[HOST];
      port = origin.port;
      const bare = await origin.bareRepo("demo");
      await cb.box.writeGrant(
        "git",
        grant({
          tool: "http.request",
          mode: "auto",
          hosts: [`${HOST}:${port}`],
          methods: ["GET", "POST"],
          paths: ["/demo.git/**"],
        }),
      );
      await cb.writeRule(
        "git",
        ruleFor(origin, [
          'secret = "GIT_TOKEN"',
          'basic = { user = "x-access-token" }',
          "git = true",
        ]),
      );
      const id = await cb.startScript(
        `set -e
         git config --global user.email task@gurt.test
         git config --global user.name task
         git clone -q https://${HOST}:${port}/demo.git demo 2>&1
         cd demo
         echo "from the task" > task.txt
         git add task.txt
         git commit -qm "a commit of the task's"
         git push -q origin HEAD:main 2>&1
         echo pushed
         env | grep -c gurt-credential-git- || true
         cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '${TOKEN}' || true
         grep -rl -e '${TOKEN}' "$HOME" /tmp 2>/dev/null | wc -l`,
        { credentials: ["git"] },
      );
      const { task, log } = await taskEnd(cb.box, id, 120_000);
      assertEquals(task.state, "done", log);
      assertStringIncludes(log, "pushed");
      const [placeholders, environs, files] = log.trim().split("\n").slice(-3);
      assert(Number(placeholders) >= 1, `the placeholder is not in the task's environment: ${log}`);
      assertEquals([environs, files], ["0", "0"], "the token is in the task");
      assert(!log.includes(TOKEN), "the token reached the task's log");

      // The push landed in the server's repository.
      const shown = await new Deno.Command("git", {
        args: ["--git-dir", bare, "log", "-1", "--format=%s", "main"],
        stdout: "piped",
      }).output();
      assertEquals(new TextDecoder().decode(shown.stdout).trim(), "a commit of the task's");

      // Every request the server answered with its content carried the token, never the
      // placeholder; each was a decided call of http.request, allowed by the grant.
      const served = origin.seen.filter((seen) => seen.status === 200);
      assert(served.length >= 4, `${served.length} requests served`);
      const basic = `Basic ${btoa(`x-access-token:${TOKEN}`)}`;
      for (const seen of origin.seen) {
        assert(seen.authorization === null || seen.authorization === basic, seen.authorization!);
      }
      const decisions = (await recordsOf(cb.box, "decision")).filter((record) =>
        record.tool === "http.request"
      );
      assertEquals(decisions.length, origin.seen.filter((seen) => seen.authorization).length);
      const calls = decisions.map((decision) => JSON.parse(decision.arguments));
      for (const decision of decisions) {
        assertEquals(decision.outcome.outcome, "allowed", JSON.stringify(decision));
        assertEquals(decision.grant, "git");
      }
      for (const call of calls) {
        assertEquals(Object.keys(call).sort(), ["host", "method", "path"]);
        assertEquals(call.host, `${HOST}:${port}`);
        assert(call.path.startsWith("/demo.git/"), call.path);
      }
      const paths = calls.map((call) => `${call.method} ${call.path}`);
      assert(paths.includes("POST /demo.git/git-receive-pack"), paths.join(", "));
      // Each has its Result: the status, and the answer's size and hash.
      const ids = new Set(decisions.map((decision) => decision.call));
      const results = (await recordsOf(cb.box, "result")).filter((r) => ids.has(r.call));
      assertEquals(results.length, decisions.length, JSON.stringify(results));
      for (const result of results) assertEquals(result.status, "result", JSON.stringify(result));
      // The task's journal keeps each answer's status, and its body's size and hash as it was sent.
      const journal = (await cb.box.admin("GET", `/tasks/${id}`)).body.journal;
      const answers = journal.filter((line: Json) =>
        line.type === "tool.result" && line.tool === "http.request"
      );
      assertEquals(answers.length, decisions.length);
      for (const line of answers) {
        const output = line.answer.output;
        assertEquals([output.status, output.ended], [200, "complete"], JSON.stringify(line));
        assert(Number.isSafeInteger(output.bytes) && /^[0-9a-f]{64}$/.test(output.sha256));
      }
      const verified = await cb.cli(["audit", "verify"]);
      assertEquals(verified.code, 0, verified.stdout + verified.stderr);
      const audit = JSON.stringify(await cb.box.records());
      assert(!audit.includes(TOKEN), "the token is in the audit log");
    } finally {
      await cb.close();
    }
  },
});
