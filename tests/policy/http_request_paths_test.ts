/**
 * http.request arguments (docs/grants.md#httprequest): exactly {method, host, path}; a path that
 * could climb out of a pattern is refused with invalid_arguments, encoded unreserved characters are
 * decoded before matching, other encodings compared in uppercase hex.
 */
import { denialText } from "../../mod/policy/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import {
  decideRequest,
  httpGrant,
  req,
  said,
  withGrantsDir,
  writeAndLoad,
} from "./http_request_helpers.ts";

const HOST = "api.github.com";

function withRepos(work: (call: (path: string) => string) => void): Promise<void> {
  return withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      repos: httpGrant({ hosts: [HOST], paths: ["/repos/*", "/repos/*/%20x"] }),
      // Everything else on the host is allowed too, so that a refusal can only be the path's form.
      rest: httpGrant({ hosts: [HOST], paths: ["/**"] }),
    });
    assert(load.ok, JSON.stringify(load));
    work((path) => said(decideRequest(load, req("GET", HOST, path))));
  });
}

Deno.test("http.request: climbing paths are refused, not normalised", async () => {
  await withRepos((call) => {
    const climbing = [
      "/repos/a/../../admin",
      "/repos/..",
      "/repos/./a",
      "/repos/%2e%2e/admin",
      "/repos/%2E%2E/admin",
      "/repos/.%2e/admin",
      "/repos/%2e",
      "/repos%2Fa",
      "/repos%2fa",
      "/repos%5c..%5cadmin",
      "/repos%5Ca",
      "/repos\\a",
      "/repos//a",
      "//repos/a",
      "/repos/a/",
    ];
    for (const path of climbing) assertEquals(call(path), "denied invalid_arguments", path);
  });
});

Deno.test("http.request: a path that is not one a server reads as given is refused", async () => {
  await withRepos((call) => {
    const malformed = [
      "repos/a",
      "",
      "/repos/a b",
      "/repos/\u00e9",
      "/repos/a?x=1",
      "/repos/a#top",
      "/repos/%zz",
      "/repos/%2",
      `/${"a".repeat(4096)}`,
    ];
    for (const path of malformed) assertEquals(call(path), "denied invalid_arguments", path);
    assertEquals(call(`/${"a".repeat(4095)}`), "allowed rest", "4,096 bytes is the limit");
    assertEquals(call("/"), "allowed rest", "/ alone is the root");
  });
});

Deno.test("http.request: encoded unreserved characters are decoded before matching, others kept", async () => {
  await withRepos((call) => {
    assertEquals(call("/%72epos/x"), "allowed repos", "%72 is r");
    assertEquals(call("/%72%65%70%6F%73/x"), "allowed repos");
    assertEquals(call("/repos/%61"), "allowed repos");
    assertEquals(call("/repos/a/%20x"), "allowed repos", "%20 is compared as given");
    assertEquals(call("/repos/a/%20X"), "allowed rest", "a literal segment is case-sensitive");
    assertEquals(call("/repos/a/%2fx"), "denied invalid_arguments");
  });
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, {
      enc: httpGrant({ hosts: [HOST], paths: ["/q/%C3%A9"] }),
    });
    assertEquals(
      said(decideRequest(load, req("GET", HOST, "/q/%c3%a9"))),
      "allowed enc",
      "hex case",
    );
    assertEquals(said(decideRequest(load, req("GET", HOST, "/q/%C3%A8"))), "denied no_grant");
  });
});

Deno.test("http.request: the arguments are exactly {method, host, path}, each of its form", async () => {
  await withGrantsDir(async (dir) => {
    const load = await writeAndLoad(dir, { any: httpGrant({ hosts: ["*.github.com"] }) });
    const good = { method: "GET", host: HOST, path: "/a" };
    assertEquals(said(decideRequest(load, good)), "allowed any");
    const bad: unknown[] = [
      { method: "GET", host: HOST },
      { method: "GET", host: HOST, path: "/a", query: "x=1" },
      { ...good, method: "get" },
      { ...good, method: "" },
      { ...good, method: "G ET" },
      { ...good, method: "A".repeat(17) },
      { ...good, method: 1 },
      { ...good, host: "API.github.com" },
      { ...good, host: "127.0.0.1" },
      { ...good, host: "https://api.github.com" },
      { ...good, host: "user@api.github.com" },
      "GET https://api.github.com/a",
      null,
    ];
    for (const args of bad) {
      const outcome = decideRequest(load, args);
      assertEquals(said(outcome), "denied invalid_arguments", JSON.stringify(args));
      assert(outcome.kind === "denied");
      assertEquals(
        denialText(outcome.denial.reason),
        "Denied: the arguments are not valid for this tool.",
      );
    }
    assertEquals(said(decideRequest(load, { ...good, method: "A".repeat(16) })), "allowed any");
    assertEquals(said(decideRequest(load, { ...good, method: "VERSION-CONTROL" })), "allowed any");
  });
});
