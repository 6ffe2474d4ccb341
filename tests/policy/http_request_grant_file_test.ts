/**
 * http.request grant files (docs/grants.md#httprequest): hosts required, methods and paths
 * optional and each checked, patterns and other tools' fields refused, every problem named with
 * its file, line and field; and a methods constraint refused on every other tool.
 */
import { dormantGrants, type GrantProblem } from "../../mod/policy/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import { httpGrant, OPTIONS, withGrantsDir, writeAndLoad } from "./http_request_helpers.ts";

/** The one problem of a folder holding only `text` as bad.toml. */
async function onlyProblem(text: string): Promise<GrantProblem & { dir: string }> {
  let found: (GrantProblem & { dir: string }) | null = null;
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, { bad: text });
    assert(!load.ok, `expected bad.toml to be invalid:\n${text}`);
    assertEquals(load.problems.length, 1, JSON.stringify(load.problems));
    found = { ...load.problems[0], dir };
  });
  return found!;
}

/** The line of the field in httpGrant's text: hosts, methods, paths in that order after line 6. */
const LINE = { tool: 1, hosts: 7 } as const;

Deno.test("http.request grant: hosts are required", async () => {
  const problem = await onlyProblem(httpGrant({ methods: ["GET"] }));
  assertEquals(problem.file, `${problem.dir}/bad.toml`);
  assertEquals(problem.line, LINE.tool);
  assertStringIncludes(problem.problem, "constraints.hosts: http.request requires at least one");
  const empty = await onlyProblem(httpGrant({ hosts: [] }));
  assertEquals(empty.line, LINE.hosts);
});

Deno.test("http.request grant: each host, method and path pattern is checked, with its line and field", async () => {
  const cases: [Parameters<typeof httpGrant>[0], number, string][] = [
    [{ hosts: ["API.github.com"] }, 7, 'constraints.hosts: "API.github.com" is not a valid host'],
    [{ hosts: ["api.github.com:443"] }, 7, "leave the port out"],
    [{ hosts: ["api.github.com:0"] }, 7, "1 to 65535"],
    [{ hosts: ["api.github.com:65536"] }, 7, "1 to 65535"],
    [{ hosts: ["api.github.com:x"] }, 7, "1 to 65535"],
    [{ hosts: ["*.github.com:8443", "a.*.com"] }, 7, 'constraints.hosts: "a.*.com"'],
    [{ hosts: ["a.com"], methods: ["get"] }, 8, 'constraints.methods: "get" is not a valid method'],
    [{ hosts: ["a.com"], methods: ["GET POST"] }, 8, "constraints.methods"],
    [
      { hosts: ["a.com"], paths: ["repos"] },
      8,
      'constraints.paths: "repos" is not a valid path pattern: it does not start with /',
    ],
    [{ hosts: ["a.com"], paths: ["/repos/../admin"] }, 8, "has a .. segment"],
    [{ hosts: ["a.com"], paths: ["/repos/./a"] }, 8, "has a . segment"],
    [{ hosts: ["a.com"], paths: ["/repos//a"] }, 8, "empty segment"],
    [{ hosts: ["a.com"], paths: ["/repos/"] }, 8, "empty segment"],
    [{ hosts: ["a.com"], paths: ["/**/a"] }, 8, "has ** before its last segment"],
    [{ hosts: ["a.com"], paths: ["/repos*"] }, 8, "stand alone as a segment"],
    [{ hosts: ["a.com"], paths: ["/repos/a b"] }, 8, "printable ASCII"],
    [{ hosts: ["a.com"], paths: ["/repos/\u00e9"] }, 8, "printable ASCII"],
    [{ hosts: ["a.com"], paths: [`/${"a".repeat(4096)}`] }, 8, "longer than 4,096 bytes"],
    [{ hosts: ["a.com"], paths: ["/repos%2Fa"] }, 8, "could climb"],
    [{ hosts: ["a.com"], paths: ["/%72epos"] }, 8, 'write it as "/repos"'],
    [{ hosts: ["a.com"], paths: ["/q/%c3%a9"] }, 8, 'write it as "/q/%C3%A9"'],
    [{ hosts: ["a.com"], methods: ["GET"], paths: ["/a?b"] }, 9, "without query"],
  ];
  for (const [spec, line, text] of cases) {
    const problem = await onlyProblem(httpGrant(spec));
    assertEquals(problem.line, line, JSON.stringify(spec));
    assertStringIncludes(problem.problem, text);
  }
});

Deno.test("http.request grant: patterns and fields of other tools are refused", async () => {
  const patterns = await onlyProblem(
    httpGrant({ hosts: ["a.com"] }) + 'patterns = ["*"]\n',
  );
  assertEquals(patterns.line, 8);
  assertEquals(patterns.problem, "constraints.patterns: patterns are not supported");
  const env = await onlyProblem(
    "include_env_files = true\n" + httpGrant({ hosts: ["a.com"] }),
  );
  assertEquals(env.line, 1);
  assertStringIncludes(env.problem, "include_env_files: only a task.workdir grant");
  const typo = await onlyProblem(httpGrant({ hosts: ["a.com"] }) + 'method = ["GET"]\n');
  assertEquals(typo.line, 8);
  assertEquals(typo.problem, "constraints.method: unknown field; did you mean methods?");
});

Deno.test("methods is refused on every other tool, and http.request is never a dormant app grant", async () => {
  for (const tool of ["read_file", "shell", "http_fetch", "task.workdir"]) {
    const spec = tool === "http_fetch" ? { tool, hosts: ["a.com"] } : { tool, paths: ["/home/a"] };
    const problem = await onlyProblem(grant(spec) + 'methods = ["GET"]\n');
    assertStringIncludes(problem.problem, `constraints.methods: ${tool} does not take methods`);
  }
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      gh: httpGrant({
        hosts: ["api.github.com:8443", "*.github.com"],
        methods: ["GET"],
        paths: ["/"],
      }),
    });
    assert(load.ok, JSON.stringify(load));
    assertEquals(dormantGrants(load.grants.grants, OPTIONS.appTools), []);
    assertEquals(load.grants.grants[0].paths, ["/"]);
    assertEquals(load.grants.grants[0].hosts, ["api.github.com:8443", "*.github.com"]);
  });
});
