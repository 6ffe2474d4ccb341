/**
 * A task's own API requests with the owner's credential (issue 32), through its egress proxy in
 * its sandbox: curl with a Bearer placeholder and a query-parameter placeholder; grants by method
 * and path (an auto GET, an ask POST the owner approves with `gurt approve`, a denied DELETE), each
 * audited and `gurt audit verify` clean; and the attacks: the placeholder sent to a host off the
 * rule, over plain HTTP, through a redirect, echoed back, with a Host or a TLS name of another
 * host, on HTTP/2 and pipelined on one connection, and on a path that climbs.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type Json, taskEnd, until } from "../kit/mod.ts";
import { recordsOf, ruleFor, startCredentialBox } from "./credential_box.ts";

const API = "api.gurt.test";
const OTHER = "other.gurt.test";
const TOKEN = `tok_canary${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;

/** The lines of `log` that start with `name:`, without it. */
function said(log: string, name: string): string {
  const line = log.split("\n").find((line) => line.startsWith(`${name}:`));
  assert(line !== undefined, `no "${name}:" line in the task's log:\n${log}`);
  return line.slice(name.length + 1).trim();
}

Deno.test({
  name:
    "a task's curl with Bearer and query placeholders: an auto GET, an approved POST and a denied DELETE, each audited; the attacks get no credential",
  ignore: Deno.uid() !== 0,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const cb = await startCredentialBox({
      hosts: [API, OTHER],
      token: TOKEN,
      vault: { API_TOKEN: TOKEN },
      grants: {},
    });
    try {
      const api = cb.origins[API];
      const other = cb.origins[OTHER];
      const at = `${API}:${api.port}`;
      const base = `https://${at}`;
      await cb.box.writeGrant(
        "api-read",
        grant({
          tool: "http.request",
          mode: "auto",
          hosts: [at],
          methods: ["GET"],
          paths: ["/api/**", "/q/**", "/echo", "/redirect"],
        }),
      );
      await cb.box.writeGrant(
        "api-write",
        grant({
          tool: "http.request",
          mode: "ask",
          hosts: [at],
          methods: ["POST"],
          paths: ["/api/**"],
        }),
      );
      await cb.box.writeGrant(
        "api-no-delete",
        grant({ tool: "http.request", mode: "deny", hosts: [at], methods: ["DELETE"] }),
      );
      await cb.writeRule(
        "api",
        ruleFor(api, [
          'secret = "API_TOKEN"',
          'header = "Authorization: Bearer {}"',
          'env = ["API_TOKEN"]',
        ]),
      );
      await cb.writeRule(
        "api-query",
        ruleFor(api, ['secret = "API_TOKEN"', 'query = "access_token"', 'env = ["Q_TOKEN"]']),
      );
      const auth = `-H "Authorization: Bearer $API_TOKEN"`;
      const code = `-s -o /dev/null -w '%{http_code}'`;
      const id = await cb.startScript(
        `cat > "$HOME/other.pem" <<'PEM'
${other.caPem.trim()}
PEM
         echo "get: $(curl -s ${auth} ${base}/api/items)"
         echo "query: $(curl -s "${base}/q/items?access_token=$Q_TOKEN&page=2")"
         echo "delete: $(curl -s -X DELETE ${auth} ${base}/api/items/1)"
         echo "echo: $(curl -s -D - ${auth} ${base}/echo | tr -d '\\r' | tr '\\n' ' ')"
         echo "offhost: $(curl -s --cacert "$HOME/other.pem" ${auth} https://${OTHER}:${other.port}/echo)"
         echo "plain: $(curl -s ${auth} http://${at}/api/items)"
         echo "redirect: $(curl ${code} ${auth} "${base}/redirect?to=https://${OTHER}:${other.port}/echo")"
         echo "host: $(curl ${code} ${auth} -H 'Host: ${OTHER}:${other.port}' ${base}/api/items)"
         echo "sni: $(openssl s_client -proxy 127.0.0.1:3128 -connect ${at} -servername ${OTHER} </dev/null 2>&1 | grep -c 'BEGIN CERTIFICATE')"
         echo "h2: $(curl -s --http2 -w ' %{http_version} ' ${auth} ${base}/api/h2a ${base}/api/h2b)"
         printf 'GET /api/p1 HTTP/1.1\\r\\nHost: ${at}\\r\\nAuthorization: Bearer %s\\r\\n\\r\\nGET /api/p2 HTTP/1.1\\r\\nHost: ${at}\\r\\nAuthorization: Bearer %s\\r\\nConnection: close\\r\\n\\r\\n' "$API_TOKEN" "$API_TOKEN" \\
           | openssl s_client -proxy 127.0.0.1:3128 -connect ${at} -servername ${API} -alpn http/1.1 -quiet -ign_eof 2>/dev/null > "$HOME/pipelined.txt"
         echo "pipelined: $(grep -o 'HTTP/1.1 200' "$HOME/pipelined.txt" | wc -l)"
         echo "climb: $(curl --path-as-is ${code} ${auth} ${base}/api/../admin)"
         echo "climb-encoded: $(curl --path-as-is ${code} ${auth} ${base}/api/%2e%2e/admin)"
         echo "post: $(curl -s -X POST -H 'content-type: application/json' -d '{"title":"from the task"}' ${auth} ${base}/api/items)"`,
        { credentials: ["api", "api-query"], hosts: [`${OTHER}:${other.port}`] },
      );

      // The POST waits for the owner, who approves it with gurt approve.
      let approval: Json = null;
      await until(async () => {
        const items = (await cb.box.admin("GET", "/approvals")).body.items as Json[];
        approval = items.find((item) => item.task === id) ?? null;
        return approval !== null;
      }, 90_000);
      const shown = await cb.cli(["approvals"]);
      assertStringIncludes(shown.stdout, "http.request");
      assertStringIncludes(shown.stdout, `"method":"POST","host":"${at}","path":"/api/items"`);
      assertStringIncludes(shown.stdout, "from the task"); // the body's first bytes
      assert(!shown.stdout.includes(TOKEN));
      const approved = await cb.cli(["approve", String(approval.approval)]);
      assertEquals(approved.code, 0, approved.stdout + approved.stderr);

      const { task, log } = await taskEnd(cb.box, id, 120_000);
      assertEquals(task.state, "done", log);
      assert(!log.includes(TOKEN), `the token reached the task:\n${log}`);
      assertStringIncludes(said(log, "get"), '"ok":true');
      assertStringIncludes(said(log, "query"), '"ok":true');
      assertStringIncludes(said(log, "post"), '"ok":true');
      assertStringIncludes(said(log, "delete"), "gurt:");
      // The echo of the credential comes back redacted, in its body and its header.
      assertStringIncludes(said(log, "echo"), "x-echo: Bearer [a vault key]");
      assertStringIncludes(said(log, "echo"), '"authorization":"Bearer [a vault key]"');
      // Another host gets the placeholder as it is.
      assertStringIncludes(said(log, "offhost"), '"authorization":"Bearer gurt-credential-api-');
      assertStringIncludes(said(log, "plain"), "plain HTTP");
      assertEquals(said(log, "redirect"), "302");
      assertEquals(said(log, "host"), "421");
      assertEquals(said(log, "sni"), "0");
      assertEquals(
        said(log, "h2"),
        `{"ok":true,"method":"GET","path":"/api/h2a"} 2 {"ok":true,"method":"GET","path":"/api/h2b"} 2`,
      );
      assertEquals(said(log, "pipelined"), "2");
      assertEquals(said(log, "climb"), "403");
      assertEquals(said(log, "climb-encoded"), "403");

      // What the origins saw: the token on every credentialed request to the rule's host, the
      // placeholder elsewhere, nothing at /admin, nothing from the redirect.
      for (const seen of api.seen) {
        assertEquals(seen.authorization === null || seen.authorization === `Bearer ${TOKEN}`, true);
        assert(seen.path !== "/admin", "the climbing path reached the server");
      }
      assertEquals(api.seen.filter((seen) => seen.path === "/api/items/1"), []);
      assertEquals(
        api.seen.find((seen) => seen.path === "/q/items")?.query,
        `access_token=${TOKEN}&page=2`,
      );
      assertEquals(other.seen.length, 1, JSON.stringify(other.seen));
      assertStringIncludes(other.seen[0].authorization ?? "", "Bearer gurt-credential-api-");

      // Each request decided on its own, with its own record.
      const decisions = (await recordsOf(cb.box, "decision")).filter((d) =>
        d.tool === "http.request"
      );
      const byPath = (method: string, path: string) =>
        decisions.filter((d) => {
          const call = JSON.parse(d.arguments);
          return call.method === method && call.path === path;
        });
      assertEquals(byPath("GET", "/api/items")[0].outcome.outcome, "allowed");
      assertEquals(byPath("GET", "/q/items")[0].grant, "api-read");
      assertEquals(byPath("POST", "/api/items")[0].outcome.outcome, "ask");
      assertEquals(byPath("DELETE", "/api/items/1")[0].outcome.outcome, "denied");
      assertEquals(byPath("DELETE", "/api/items/1")[0].grant, "api-no-delete");
      for (const path of ["/api/h2a", "/api/h2b", "/api/p1", "/api/p2"]) {
        assertEquals(byPath("GET", path).length, 1, path);
      }
      assertEquals(byPath("GET", "/admin").length, 2);
      assertEquals(byPath("GET", "/admin")[0].outcome.outcome, "denied");
      const approvals = await recordsOf(cb.box, "approval");
      assertEquals(approvals.map((a) => [a.answer, a.by]), [["approved", "gurt approve"]]);

      // Each refusal of the tunnel is a net_blocked record.
      const blocked = (await recordsOf(cb.box, "net_blocked")).map((b) => b.reason);
      for (
        const reason of ["credential_plain_http", "misdirected", "sni_mismatch", "request_denied"]
      ) {
        assert(blocked.includes(reason), `no net_blocked ${reason}: ${blocked.join(", ")}`);
      }
      const verified = await cb.cli(["audit", "verify"]);
      assertEquals(verified.code, 0, verified.stdout + verified.stderr);
      assert(!JSON.stringify(await cb.box.records()).includes(TOKEN), "the token is in the audit");
      const shownTask = await cb.cli(["task", "show", id]);
      assert(!shownTask.stdout.includes("undefined"), shownTask.stdout);
    } finally {
      await cb.close();
    }
  },
});
