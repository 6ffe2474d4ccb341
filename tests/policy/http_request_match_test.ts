/**
 * http.request matching (docs/grants.md#httprequest): hosts with ports, methods, path patterns by
 * whole segments, and the mode precedence of three grants, all from real grant files on disk.
 */
import { canonicalArguments, denialText } from "../../mod/policy/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import {
  decideRequest,
  httpGrant,
  req,
  said,
  withGrantsDir,
  writeAndLoad,
} from "./http_request_helpers.ts";

Deno.test("http.request: an http.request grant loads with no app installed and allows what it covers", async () => {
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      gh: httpGrant({ hosts: ["api.github.com"], methods: ["GET"], paths: ["/repos/**"] }),
    });
    assert(load.ok, JSON.stringify(load));
    assertEquals(load.grants.grants[0].methods, ["GET"]);
    assertEquals(
      said(decideRequest(load, req("GET", "api.github.com", "/repos/a/b"))),
      "allowed gh",
    );
    assertEquals(said(decideRequest(load, req("GET", "api.github.com", "/repos"))), "allowed gh");
    assertEquals(
      said(decideRequest(load, req("POST", "api.github.com", "/repos/a"))),
      "denied no_grant",
      "a method not listed is not covered",
    );
    assertEquals(
      said(decideRequest(load, req("GET", "api.github.com", "/user"))),
      "denied no_grant",
      "a path no pattern matches is not covered",
    );
    assertEquals(
      said(decideRequest(load, req("GET", "github.com", "/repos/a"))),
      "denied no_grant",
      "another host is not covered",
    );
  });
});

Deno.test("http.request: absent methods and paths cover any method and any path of the hosts", async () => {
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, { any: httpGrant({ hosts: ["*.example.com"] }) });
    for (const method of ["GET", "POST", "DELETE", "PROPFIND"]) {
      assertEquals(
        said(decideRequest(load, req(method, "api.example.com", "/x/y"))),
        "allowed any",
      );
    }
    assertEquals(said(decideRequest(load, req("GET", "a.b.example.com", "/"))), "allowed any");
    assertEquals(
      said(decideRequest(load, req("GET", "example.com", "/"))),
      "denied no_grant",
      "*. needs at least one label more",
    );
  });
});

Deno.test("http.request: * matches exactly one non-empty segment, a last ** zero or more", async () => {
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      one: httpGrant({ hosts: ["api.github.com"], paths: ["/repos/*/pulls"] }),
      all: httpGrant({ hosts: ["git.example.com"], paths: ["/repos/**"] }),
    });
    const one = (path: string) => said(decideRequest(load, req("GET", "api.github.com", path)));
    const all = (path: string) => said(decideRequest(load, req("GET", "git.example.com", path)));
    assertEquals(one("/repos/a/pulls"), "allowed one");
    assertEquals(one("/repos/pulls"), "denied no_grant", "* is one segment, not zero");
    assertEquals(one("/repos/a/b/pulls"), "denied no_grant", "* is one segment, not two");
    assertEquals(one("/repos/a/pulls/1"), "denied no_grant", "a literal last segment ends it");
    assertEquals(all("/repos"), "allowed all", "** matches zero segments");
    assertEquals(all("/repos/a"), "allowed all");
    assertEquals(all("/repos/a/b/c"), "allowed all");
    assertEquals(all("/reposx/a"), "denied no_grant", "segments are whole");
    assertEquals(all("/"), "denied no_grant");
  });
});

Deno.test("http.request: a port must match exactly; a bare host is port 443", async () => {
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      alt: httpGrant({ hosts: ["git.example.com:8443"] }),
      std: httpGrant({ hosts: ["*.example.org"] }),
    });
    const call = (host: string) => said(decideRequest(load, req("GET", host, "/a")));
    assertEquals(call("git.example.com:8443"), "allowed alt");
    assertEquals(call("git.example.com"), "denied no_grant", "443 is not 8443");
    assertEquals(call("git.example.com:8444"), "denied no_grant");
    assertEquals(call("a.example.org"), "allowed std");
    assertEquals(call("a.example.org:8443"), "denied no_grant", "a bare pattern is 443 only");
    assertEquals(
      call("a.example.org:443"),
      "denied invalid_arguments",
      ":443 is written without a port",
    );
    for (
      const bad of [
        "a.example.org:0",
        "a.example.org:65536",
        "a.example.org:08443",
        "a.example.org:",
      ]
    ) {
      assertEquals(call(bad), "denied invalid_arguments", bad);
    }
  });
});

Deno.test("http.request: three grants combine: auto GET, ask POST to pulls, deny DELETE everywhere", async () => {
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      "gh-read": httpGrant({ hosts: ["api.github.com"], methods: ["GET"], paths: ["/repos/**"] }),
      "gh-pr": httpGrant({
        mode: "ask",
        hosts: ["api.github.com"],
        methods: ["POST"],
        paths: ["/repos/*/*/pulls"],
      }),
      "gh-no-delete": httpGrant({ mode: "deny", hosts: ["api.github.com"], methods: ["DELETE"] }),
    });
    assert(load.ok, JSON.stringify(load));
    const call = (method: string, path: string) =>
      said(decideRequest(load, req(method, "api.github.com", path)));
    assertEquals(call("GET", "/repos/o/r/pulls"), "allowed gh-read");
    assertEquals(call("POST", "/repos/o/r/pulls"), "ask gh-pr");
    assertEquals(call("POST", "/repos/o/r/issues"), "denied no_grant");
    assertEquals(call("DELETE", "/repos/o/r"), "denied denied_by_grant gh-no-delete");
    const denied = decideRequest(load, req("DELETE", "api.github.com", "/repos/o/r"));
    assert(denied.kind === "denied");
    assertEquals(denialText(denied.denial.reason), "Denied: a grant forbids this call.");
  });
});

Deno.test("http.request: the more restrictive mode wins first, then the longer pattern", async () => {
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      a: httpGrant({ mode: "ask", hosts: ["api.github.com"], paths: ["/repos/**"] }),
      b: httpGrant({ hosts: ["api.github.com"], paths: ["/repos/o/**", "/x"] }),
      c: httpGrant({ hosts: ["api.github.com"], paths: ["/repos/o/r/**"] }),
      d: httpGrant({ mode: "deny", hosts: ["api.github.com"], paths: ["/repos/o/r/secret"] }),
    });
    const call = (path: string) => decideRequest(load, req("GET", "api.github.com", path));
    assertEquals(said(call("/repos/o/r/a")), "ask a", "ask beats auto whatever the patterns");
    assertEquals(said(call("/repos/o/r/secret")), "denied denied_by_grant d");
    const ask = call("/repos/o/r/a");
    assert(ask.kind === "ask");
    assertEquals(ask.ask.matchedPath, "/repos/**");
    await Deno.remove(`${dir}/a.toml`);
    const after = await writeAndLoad(dir, {});
    const allowed = decideRequest(after, req("GET", "api.github.com", "/repos/o/r/a"));
    assertEquals(said(allowed), "allowed c", "among autos the longer pattern wins");
    assert(allowed.kind === "allowed");
    assertEquals(allowed.decision.matchedPath, "/repos/o/r/**");
    assertEquals(
      said(decideRequest(after, req("GET", "api.github.com", "/repos/o/s"))),
      "allowed b",
    );
  });
});

Deno.test("http.request: the owner approves {method, host, path}, the path as matched", async () => {
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      pr: httpGrant({ mode: "ask", hosts: ["api.github.com:8443"], paths: ["/repos/*/pulls"] }),
    });
    const asked = decideRequest(
      load,
      req("POST", "api.github.com:8443", "/%72epos/a%7e%20b/pulls"),
    );
    assert(asked.kind === "ask", said(asked));
    assertEquals(
      canonicalArguments(asked.ask),
      '{"method":"POST","host":"api.github.com:8443","path":"/repos/a~%20b/pulls"}',
    );
  });
});
