/**
 * `dist/gurt` as one file (issue 21): copied alone into an empty folder, on a machine where the
 * checkout, node_modules, Deno's cache and the npm-installed Deno cannot be seen, it serves a task
 * whose worker calls a tool, approves, verifies the audit log, runs the guest and the MCP relay;
 * an unpacked copy that was changed is refused and unpacked again. Root only (mount namespaces).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gateProblems, pointersIn } from "../runbook/gate.ts";
import {
  checkoutRoot,
  hiddenCommand,
  type Hiding,
  hidingFor,
  plainEnv,
  runHidden,
  spawnHidden,
} from "./hidden.ts";
import { grant, guestArgs, readUntil, waitFor } from "../kit/mod.ts";

const root = checkoutRoot();
const asRoot = Deno.uid() === 0;

/** Builds dist/gurt unless it was built from these very sources (CI's install.sh built it). */
async function builtFile(): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: [`${root}/tools/build_dist.sh`, "--if-stale"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return `${root}/dist/gurt`;
}

/** The first 2,000 bytes of a file, as text: the self-extracting form's header. */
async function headOf(path: string): Promise<string> {
  const file = await Deno.open(path);
  try {
    const buffer = new Uint8Array(2000);
    const n = await file.read(buffer) ?? 0;
    return new TextDecoder().decode(buffer.subarray(0, n));
  } finally {
    file.close();
  }
}

/** The command lines of the running processes that name `part`, words joined by spaces. */
async function commandLinesNaming(part: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const line = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (line.includes(part)) found.push(line.replaceAll("\0", " ").trim());
  }
  return found;
}

const GRANTS = {
  echo: grant({ tool: "example.echo" }),
  spend: grant({ tool: "example.spend", mode: "ask" }),
};

Deno.test({
  name:
    "dist/gurt alone, with the checkout, node_modules, Deno's cache and npm's deno hidden, does gurt's work",
  ignore: !asRoot,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const built = await builtFile();
    const top = await Deno.makeTempDir({ prefix: "gurt-dist-" });
    await Deno.chmod(top, 0o711); // task users pass through to the box home and the cache
    const place = `${top}/empty-folder`;
    const home = `${top}/home`;
    const varLibGurt = `${top}/var-lib-gurt`;
    const denoCache = `${top}/deno-cache`;
    for (const dir of [place, home, varLibGurt, denoCache]) await Deno.mkdir(dir, { mode: 0o711 });
    await Deno.copyFile(built, `${place}/gurt`);
    await Deno.chmod(`${place}/gurt`, 0o755);
    const gurt = `${place}/gurt`;
    const hiding: Hiding = await hidingFor({ denoCache, varLibGurt });
    const run = (args: string[], env: Record<string, string> = {}) =>
      runHidden(hiding, [gurt, ...args], { env, cwd: place });
    const form = (await headOf(gurt)).startsWith("#!/bin/sh") ? "self-extracting" : "compiled";
    let serve: Deno.ChildProcess | null = null;
    const users: string[] = [];
    try {
      await t.step("nothing of the checkout or of Deno can be seen in the namespace", async () => {
        const seen = await runHidden(hiding, [
          "/bin/sh",
          "-c",
          'ls -A "$1" | wc -l; command -v deno >/dev/null && deno --version >/dev/null 2>&1 && echo deno runs; ls -A "$2" | wc -l; ls -A "$PWD"',
          "sh",
          root,
          `${plainEnv().HOME}/.cache/deno`,
        ], { cwd: place });
        assertEquals(seen.stdout, "0\n0\ngurt\n");
      });

      let payload = "";
      await t.step(
        "the first start unpacks into /var/lib/gurt/cache; --version says the form, hash and Deno",
        async () => {
          const first = await run(["--version"]);
          assertEquals(first.code, 0, first.stderr);
          if (form === "self-extracting") {
            assertStringIncludes(
              first.stderr,
              "first start of this file: unpacking it into /var/lib/gurt/cache/",
            );
            const match =
              /^gurt (\S+) \(self-extracting, payload sha256 ([0-9a-f]{64}), deno (\S+)\)$/.exec(
                first.stdout.trim(),
              );
            assert(match !== null, first.stdout);
            assertEquals(match[3], Deno.version.deno);
            payload = match[2];
            assertStringIncludes(await headOf(gurt), `gurt_sha=${payload}`);
            const again = await run(["--version"]);
            assertEquals([again.code, again.stderr], [0, ""]);
          } else {
            assert(
              /\(compiled, sources sha256 [0-9a-f]{64}, deno /.test(first.stdout),
              first.stdout,
            );
          }
        },
      );
      const program = `${varLibGurt}/cache/${payload}/program`;

      await Deno.mkdir(`${home}/grants`, { recursive: true });
      for (const [id, text] of Object.entries(GRANTS)) {
        await Deno.writeTextFile(`${home}/grants/${id}.toml`, text);
      }

      await t.step(
        "gurt serve runs a task whose worker calls tools; gurt approve; gurt audit verify",
        async () => {
          serve = spawnHidden(hiding, [gurt, "--home", home, "serve"], { cwd: place });
          const ready = await readUntil(
            serve.stderr,
            (text) => text.includes("admin socket ready"),
          );
          assertStringIncludes(ready.text, "admin socket ready");
          ready.rest.catch(() => {});
          serve.stdout.cancel().catch(() => {});

          await Deno.writeTextFile(
            `${top}/script.txt`,
            'POST /call {"tool":"example.echo","input":{"text":"hello"}}\n' +
              'POST /call {"tool":"example.spend","input":{"cents":250,"payee":"ACME"}}\n',
          );
          const started = await run([
            "--home",
            home,
            "task",
            "start",
            "--tools",
            "example.echo,example.spend",
            "--script",
            `${top}/script.txt`,
            "pay ACME",
          ]);
          assertEquals(started.code, 0, started.stderr);
          const task = started.stdout.trim();
          users.push(`box-${task}`);
          let seen = "";
          const slowly = { ms: 60_000, every: 200, seen: () => seen };
          const id = await waitFor(async () => {
            const list = await run(["--home", home, "approvals"]);
            seen = list.stdout + list.stderr;
            return /^(\d+)\s/m.exec(list.stdout)?.[1];
          }, { ...slowly, what: "the spend's approval" });
          const approved = await run(["--home", home, "approve", id]);
          assertEquals(approved.code, 0, approved.stderr);
          assertStringIncludes(approved.stdout, `approved ${id}`);
          const shown = await waitFor(async () => {
            const show = await run(["--home", home, "task", "show", task]);
            seen = show.stdout + show.stderr;
            const both = / result \S+ example\.echo /.test(show.stdout) &&
              / result \S+ example\.spend /.test(show.stdout);
            return both && show.stdout;
          }, { ...slowly, what: "both calls' results" });
          assertStringIncludes(shown, "hello");
          const verified = await run(["--home", home, "audit", "verify"]);
          assertEquals(verified.code, 0, verified.stderr);
          assert(/^audit: ok, \d+ records/.test(verified.stdout), verified.stdout);
          const log = await Deno.readTextFile(`${home}/tasks/${task}/worker.log`).catch(() => "");
          assert(!log.includes(root), `the worker's log names the checkout:\n${log}`);
          // Every process of this box (the core, and what it started: the portal, workers) runs
          // the unpacked program, none the checkout.
          const running = await commandLinesNaming(home);
          assert(running.length > 0, "no process of the box was found");
          for (const line of running) {
            assert(!line.includes(root), `a process names the checkout: ${line}`);
            if (form === "self-extracting") {
              assert(line.startsWith(`/var/lib/gurt/cache/${payload}/program/deno `), line);
            }
          }
        },
      );

      await t.step(
        "gurt mcp, as a task's mcp.json names it, answers the MCP SDK client",
        async () => {
          const started = await run([
            "--home",
            home,
            "task",
            "start",
            "--worker",
            "cmd",
            "--tools",
            "example.echo",
            "stay",
            "--",
            "/bin/sleep",
            "300",
          ]);
          assertEquals(started.code, 0, started.stderr);
          const task = started.stdout.trim();
          users.push(`box-${task}`);
          const text = await Deno.readTextFile(`${home}/tasks/${task}/mcp.json`);
          assert(!text.includes(root), `mcp.json names the checkout:\n${text}`);
          const server = JSON.parse(text).mcpServers.box as {
            command: string;
            args: string[];
            env: Record<string, string>;
          };
          if (form === "self-extracting") {
            assertEquals(server.command, `/var/lib/gurt/cache/${payload}/program/deno`);
          } else {
            assertEquals(server.command, gurt);
          }
          const [program, ...args] = hiddenCommand(hiding, [server.command, ...server.args]);
          const client = new Client({ name: "gurt-dist-test", version: "0.0.0" });
          const transport = new StdioClientTransport({
            command: program,
            args,
            env: plainEnv(server.env),
            stderr: "pipe",
          });
          try {
            await client.connect(transport);
            const tools = await client.listTools();
            assertEquals(tools.tools.map((tool: { name: string }) => tool.name).sort(), [
              "box_ask",
              "example__echo",
            ]);
            const echoed = await client.callTool({
              name: "example__echo",
              arguments: { text: "hi" },
            });
            assertEquals(
              (echoed as { content: { text: string }[] }).content.map((c) => c.text).join(""),
              '{"text":"hi"}',
            );
          } finally {
            await client.close();
          }
          const stopped = await run(["--home", home, "task", "stop", task]);
          assertEquals(stopped.code, 0, stopped.stderr);
        },
      );

      await t.step("gurt guest answers curl on /v1/exec", async () => {
        const workspace = `${top}/workspace`;
        await Deno.mkdir(workspace);
        const token = "dist-test-token-0123456789";
        const guest = spawnHidden(
          hiding,
          [gurt, "guest", ...guestArgs(workspace)],
          { env: { BOX_TOKEN: token }, cwd: place },
        );
        const errors = new Response(guest.stderr).text();
        try {
          const listening = await readUntil(guest.stdout, (text) => text.includes("\n"));
          if (!listening.text.includes("\n")) {
            throw new Error(`the guest printed no line: ${await errors}`);
          }
          listening.rest.catch(() => {});
          const exec = JSON.parse(listening.text.slice(0, listening.text.indexOf("\n"))).exec;
          const curl = await new Deno.Command("curl", {
            args: [
              "-sS",
              "-m",
              "60",
              "-H",
              `authorization: Bearer ${token}`,
              "-H",
              "content-type: application/json",
              "-d",
              '{"command":["echo","ok"]}',
              `${exec}/v1/exec`,
            ],
            stdout: "piped",
            stderr: "piped",
          }).output();
          const body = JSON.parse(new TextDecoder().decode(curl.stdout));
          assertEquals([body.stdout, body.exit_code], ["ok\n", 0]);
          await fetch(`${exec}/v1/shutdown`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}` },
          }).then((response) => response.body?.cancel());
        } finally {
          try {
            guest.kill("SIGKILL");
          } catch {
            // already gone
          }
          await guest.status;
          await errors;
        }
      });

      if (form === "self-extracting") {
        await t.step(
          "an unpacked copy that was changed is refused and unpacked again",
          async () => {
            const main = `${program}/main.ts`;
            const before = await Deno.readTextFile(main);
            await Deno.writeTextFile(main, "\nconsole.log('changed');\n", { append: true });
            const changed = await run(["--version"]);
            assertEquals(changed.code, 0, changed.stderr);
            assertStringIncludes(
              changed.stderr,
              "was changed since it was unpacked; it is set aside and unpacked again; see runbook.md#dist-cache-changed",
            );
            assert(!changed.stdout.includes("changed"), changed.stdout);
            assertEquals(await Deno.readTextFile(main), before);
            // A file added is a change too; and once unpacked again, the copy runs without a word.
            await Deno.writeTextFile(`${program}/mod/extra.ts`, "");
            const added = await run(["--version"]);
            assertStringIncludes(added.stderr, "was changed since it was unpacked");
            const quiet = await run(["--version"]);
            assertEquals([quiet.code, quiet.stderr], [0, ""]);
            // With the clock behind the seal's time, change times prove nothing: the list
            // decides. An unchanged copy runs without a word; a changed one is refused as before.
            const seal = `${varLibGurt}/cache/${payload}/seal`;
            const future = new Date(Date.now() + 3_600_000);
            await Deno.utime(seal, future, future);
            const behind = await run(["--version"]);
            assertEquals([behind.code, behind.stderr], [0, ""]);
            await Deno.writeTextFile(main, "\n// changed\n", { append: true });
            await Deno.utime(seal, future, future);
            const changedBehind = await run(["--version"]);
            assertStringIncludes(changedBehind.stderr, "was changed since it was unpacked");
            assertEquals(await Deno.readTextFile(main), before);
          },
        );

        await t.step("a damaged file is refused before anything of it runs", async () => {
          const bytes = await Deno.readFile(gurt);
          bytes[bytes.length - 100] ^= 0xff;
          await Deno.writeFile(`${top}/damaged`, bytes, { mode: 0o755 });
          const damaged = await runHidden(hiding, [`${top}/damaged`, "--version"], {
            env: { GURT_CACHE: `${top}/other-cache` },
          });
          assertEquals(damaged.code, 1);
          assertStringIncludes(damaged.stderr, "is damaged: its payload's SHA-256 is");
          assertStringIncludes(damaged.stderr, "see runbook.md#dist-damaged");
          assertEquals(damaged.stdout, "");
        });
      }
    } finally {
      if (serve !== null) {
        const child = serve as Deno.ChildProcess;
        try {
          child.kill("SIGTERM");
        } catch {
          // already gone
        }
        await child.status;
      }
      for (const user of users) {
        await new Deno.Command("userdel", { args: [user], stderr: "null" }).output();
      }
      await Deno.remove(top, { recursive: true });
    }
  },
});

Deno.test("every runbook pointer in the self-extracting header names a heading of runbook.md", async () => {
  const header = await Deno.readTextFile(`${root}/tools/dist/header.sh`);
  const pointers = pointersIn("tools/dist/header.sh", header);
  assert(pointers.length >= 4, "the header's pointers were not found");
  assertEquals(gateProblems(pointers, await Deno.readTextFile(`${root}/runbook.md`)), []);
});
