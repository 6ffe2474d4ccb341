/**
 * The loopback HTTPS origin of the test kit, driven by real clients from the host: git clones and
 * pushes over smart HTTP with the right credential and fails with a wrong one; curl reaches the
 * API over HTTP/2 and HTTP/1.1 with a bearer header or a query token, and `/echo`, `/redirect` and
 * `/big` answer as issue 32's tests need; `close()` leaves no port, file or process.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type HttpsOrigin, startHttpsOrigin } from "./https_origin.ts";

const HOST = "git.gurt.test";
const TOKEN = "ghs_origin-test-token-1";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const out = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Runs `work` with a fresh origin and a scratch folder, both gone afterwards. */
async function withOrigin(work: (origin: HttpsOrigin, scratch: string) => Promise<void>) {
  const origin = await startHttpsOrigin({ host: HOST, token: TOKEN });
  const scratch = await Deno.makeTempDir({ prefix: "gurt-origin-test-" });
  try {
    await work(origin, scratch);
  } finally {
    await origin.close();
    await Deno.remove(scratch, { recursive: true });
  }
}

/** git as a task's client would run it: trusting the test CA, the host resolved to loopback. */
function gitAs(origin: HttpsOrigin, scratch: string, password: string) {
  const helper = `!f() { echo username=x-access-token; echo password=${password}; }; f`;
  return (args: string[]) =>
    run("git", [
      "-c",
      `http.curloptResolve=${HOST}:${origin.port}:127.0.0.1`,
      "-c",
      `credential.helper=${helper}`,
      "-c",
      "user.name=Task",
      "-c",
      "user.email=task@gurt.test",
      ...args,
    ], {
      GIT_SSL_CAINFO: origin.caFile,
      HOME: scratch,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
    });
}

function curl(origin: HttpsOrigin, args: string[]) {
  return run("curl", [
    "-sS",
    "--resolve",
    `${HOST}:${origin.port}:127.0.0.1`,
    "--cacert",
    origin.caFile,
    ...args,
  ]);
}

const url = (origin: HttpsOrigin, path: string) => `https://${HOST}:${origin.port}${path}`;

Deno.test("git clones and pushes with the right credential; the bare repo has the commit", async () => {
  await withOrigin(async (origin, scratch) => {
    const bare = await origin.bareRepo("demo");
    const git = gitAs(origin, scratch, TOKEN);
    const work = `${scratch}/demo`;
    let start = performance.now();
    const clone = await git(["clone", url(origin, "/demo.git"), work]);
    const cloneMs = Math.round(performance.now() - start);
    assertEquals(clone.code, 0, clone.stderr);
    assertEquals(await Deno.readTextFile(`${work}/README.md`), "# demo\n");
    const challenged = origin.seen.find((r) => r.status === 401);
    assert(challenged?.authorization === null, "git was asked for a credential first");

    await Deno.writeTextFile(`${work}/task.txt`, "from the task\n");
    assertEquals((await git(["-C", work, "add", "task.txt"])).code, 0);
    assertEquals((await git(["-C", work, "commit", "-q", "-m", "task commit"])).code, 0);
    start = performance.now();
    const push = await git(["-C", work, "push", "origin", "main"]);
    const pushMs = Math.round(performance.now() - start);
    assertEquals(push.code, 0, push.stderr);
    console.log(`clone ${cloneMs} ms, push ${pushMs} ms`);

    const log = await run("git", ["-C", bare, "log", "--format=%s", "main"]);
    assertEquals(log.stdout.trim().split("\n"), ["task commit", "first commit"]);
    const pack = origin.seen.find((r) => r.path === "/demo.git/git-receive-pack");
    assert(pack !== undefined && pack.status === 200 && pack.bodyBytes > 0, "receive-pack ran");
  });
});

Deno.test("git works over HTTP/1.1 too, with a chunked push body", async () => {
  await withOrigin(async (origin, scratch) => {
    const bare = await origin.bareRepo("demo");
    const git = gitAs(origin, scratch, TOKEN);
    const h1 = (args: string[]) => git(["-c", "http.version=HTTP/1.1", ...args]);
    const work = `${scratch}/demo`;
    assertEquals((await h1(["clone", url(origin, "/demo.git"), work])).code, 0);
    const noise = crypto.getRandomValues(new Uint8Array(48 * 1024));
    await Deno.writeFile(`${work}/noise.bin`, noise);
    await h1(["-C", work, "add", "noise.bin"]);
    await h1(["-C", work, "commit", "-q", "-m", "noise"]);
    const push = await h1(["-c", "http.postBuffer=1024", "-C", work, "push", "origin", "main"]);
    assertEquals(push.code, 0, push.stderr);
    const log = await run("git", ["-C", bare, "log", "--format=%s", "main"]);
    assertEquals(log.stdout.trim().split("\n"), ["noise", "first commit"]);
    const gitRequests = origin.seen.filter((r) => r.path.startsWith("/demo.git/"));
    assert(gitRequests.length > 0 && gitRequests.every((r) => r.protocol === "HTTP/1.1"));
    // With a small postBuffer git first sends a 4-byte probe, then the pack chunked.
    const packs = gitRequests.filter((r) => r.path.endsWith("/git-receive-pack"));
    const largest = Math.max(0, ...packs.map((r) => r.bodyBytes));
    assert(largest > noise.byteLength, `the whole pack reached git (${largest} bytes)`);
  });
});

Deno.test("a gzipped upload-pack request (protocol v0, many wants) reaches git whole", async () => {
  await withOrigin(async (origin, scratch) => {
    const bare = await origin.bareRepo("demo");
    const branches = `t=$(git rev-parse main^{tree}); for i in $(seq 1 40); do
      c=$(echo "branch $i" | git commit-tree "$t" -p main); git update-ref refs/heads/b$i "$c"; done`;
    const made = await run("sh", ["-c", `cd ${bare} && ${branches}`], {
      GIT_AUTHOR_NAME: "O",
      GIT_AUTHOR_EMAIL: "o@gurt.test",
      GIT_COMMITTER_NAME: "O",
      GIT_COMMITTER_EMAIL: "o@gurt.test",
    });
    assertEquals(made.code, 0, made.stderr);
    const git = gitAs(origin, scratch, TOKEN);
    const work = `${scratch}/demo`;
    const clone = await git(["-c", "protocol.version=0", "clone", url(origin, "/demo.git"), work]);
    assertEquals(clone.code, 0, clone.stderr);
    const branchList = await run("git", ["-C", work, "branch", "-r"]);
    assertStringIncludes(branchList.stdout, "origin/b40");
    const pack = origin.seen.find((r) => r.path.endsWith("/git-upload-pack"));
    assert(pack !== undefined && pack.bodyBytes > 0 && pack.bodyBytes < 40 * 50, "gzip body");
  });
});

Deno.test("git fails to clone and to push with a wrong credential", async () => {
  await withOrigin(async (origin, scratch) => {
    const bare = await origin.bareRepo("demo");
    const wrong = gitAs(origin, scratch, "not-the-token");
    const clone = await wrong(["clone", url(origin, "/demo.git"), `${scratch}/nope`]);
    assert(clone.code !== 0, "a clone with a wrong credential must fail");
    assertStringIncludes(clone.stderr, "Authentication failed");

    const right = gitAs(origin, scratch, TOKEN);
    const work = `${scratch}/demo`;
    assertEquals((await right(["clone", url(origin, "/demo.git"), work])).code, 0);
    await Deno.writeTextFile(`${work}/task.txt`, "from the task\n");
    await right(["-C", work, "add", "task.txt"]);
    await right(["-C", work, "commit", "-q", "-m", "task commit"]);
    const push = await wrong(["-C", work, "push", "origin", "main"]);
    assert(push.code !== 0, "a push with a wrong credential must fail");
    const log = await run("git", ["-C", bare, "log", "--format=%s", "main"]);
    assertEquals(log.stdout.trim(), "first commit");
    assert(!origin.seen.some((r) => r.path.endsWith("/git-receive-pack") && r.status === 200));
  });
});

Deno.test("the API wants the bearer token, and says which protocol each request came on", async () => {
  await withOrigin(async (origin) => {
    const h2 = await curl(origin, [
      "--http2",
      "-H",
      `Authorization: Bearer ${TOKEN}`,
      "-w",
      "\n%{http_code} %{http_version}",
      url(origin, "/api/x"),
    ]);
    assertEquals(h2.stdout, '{"ok":true,"method":"GET","path":"/api/x"}\n200 2');
    assertEquals(origin.seen.at(-1)?.protocol, "HTTP/2");
    assertEquals(origin.seen.at(-1)?.authorization, `Bearer ${TOKEN}`);

    const h1 = await curl(origin, [
      "--http1.1",
      "-X",
      "POST",
      "-d",
      "hello",
      "-H",
      `Authorization: token ${TOKEN}`,
      "-w",
      " %{http_code}",
      url(origin, "/api/repos/a"),
    ]);
    assertEquals(h1.stdout, '{"ok":true,"method":"POST","path":"/api/repos/a"} 200');
    assertEquals(origin.seen.at(-1)?.protocol, "HTTP/1.1");
    assertEquals(origin.seen.at(-1)?.bodyBytes, 5);

    for (const header of [[], ["-H", "Authorization: Bearer wrong"]]) {
      const refused = await curl(origin, [
        ...header,
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        url(origin, "/api/x"),
      ]);
      assertEquals(refused.stdout, "401");
    }
  });
});

Deno.test("the query route wants access_token; echo, redirect and big answer", async () => {
  await withOrigin(async (origin) => {
    const code = ["-o", "/dev/null", "-w", "%{http_code}"];
    assertEquals(
      (await curl(origin, [...code, url(origin, `/q/x?access_token=${TOKEN}`)])).stdout,
      "200",
    );
    assertEquals(origin.seen.at(-1)?.query, `access_token=${TOKEN}`);
    assertEquals(
      (await curl(origin, [...code, url(origin, "/q/x?access_token=no")])).stdout,
      "401",
    );
    assertEquals((await curl(origin, [...code, url(origin, "/q/x")])).stdout, "401");

    const echo = await curl(origin, [
      "-i",
      "-H",
      "Authorization: Bearer echoed",
      url(origin, "/echo"),
    ]);
    assertStringIncludes(echo.stdout, "x-echo: Bearer echoed");
    assertStringIncludes(echo.stdout, '{"authorization":"Bearer echoed"}');

    const to = url(origin, "/api/after");
    const redirect = await curl(origin, [
      "-o",
      "/dev/null",
      "-w",
      "%{http_code} %{redirect_url}",
      url(origin, `/redirect?to=${encodeURIComponent(to)}`),
    ]);
    assertEquals(redirect.stdout, `302 ${to}`);

    const bytes = 5 * 1024 * 1024 + 7;
    const big = await curl(origin, [
      "-o",
      "/dev/null",
      "-w",
      "%{http_code} %{size_download}",
      url(origin, `/big?bytes=${bytes}`),
    ]);
    assertEquals(big.stdout, `200 ${bytes}`);
  });
});

Deno.test("the user option names the Basic user; close() leaves no port, files or git process", async () => {
  const origin = await startHttpsOrigin({ host: HOST, token: TOKEN, user: "owner" });
  const bare = await origin.bareRepo("demo");
  const ok = await curl(origin, [
    "-o",
    "/dev/null",
    "-w",
    "%{http_code}",
    url(origin, "/q/x?access_token=" + TOKEN),
  ]);
  assertEquals(ok.stdout, "200");
  const refs = url(origin, "/demo.git/info/refs?service=git-upload-pack");
  const asDefault = await curl(origin, ["-i", "-u", `x-access-token:${TOKEN}`, refs]);
  assertStringIncludes(asDefault.stdout, 'www-authenticate: Basic realm="gurt-test"');
  const asOwner = await curl(origin, [
    "-o",
    "/dev/null",
    "-w",
    "%{http_code}",
    "-u",
    `owner:${TOKEN}`,
    refs,
  ]);
  assertEquals(asOwner.stdout, "200");
  await origin.close();
  const after = await curl(origin, ["-o", "/dev/null", "-w", "%{http_code}", url(origin, "/q/x")]);
  assert(after.code !== 0, "the port still answers after close()");
  assert(!(await exists(bare)) && !(await exists(origin.caFile)), "temporary files are left");
  const own = await run("pgrep", ["-P", String(Deno.pid), "git"]);
  assertEquals(own.stdout, "");
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
