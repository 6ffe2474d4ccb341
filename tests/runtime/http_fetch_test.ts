/**
 * http_fetch in the core against a local HTTPS server with a test CA: the allowed host is
 * reached; another host, a redirect to another host or to http, and a private address are refused
 * before anything is sent there; the size cap and the time limit hold; certificates are verified.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import {
  FETCH_ERRORS,
  type FetchSettings,
  HttpFetcher,
  isRestrictedAddress,
  RunError,
} from "../../mod/runtime/mod.ts";
import { startTlsServer, type TlsServer } from "./tls_fixture.ts";
import type { ProbeLine } from "./own_address_probe.ts";
import { loadConfig } from "../../mod/config/mod.ts";
import { ROLE_TABLE, runRole } from "../../mod/roles/mod.ts";
import { withHome } from "../kit/mod.ts";

const SETTINGS: FetchSettings = {
  timeoutMs: 5000,
  maxBytes: 1_000_000,
  maxRedirects: 5,
  allowPrivateHosts: ["good.test", "other.test"],
};

/** Every test host resolves to the local server. */
const resolveLocal = (host: string): Promise<string[]> =>
  Promise.resolve(host.endsWith(".test") ? ["127.0.0.1"] : []);

function fetcher(server: TlsServer, settings: Partial<FetchSettings> = {}): HttpFetcher {
  return new HttpFetcher({ ...SETTINGS, ...settings }, {
    ca: server.ca,
    resolve: resolveLocal,
    port: server.port,
  });
}

let stall: (() => void) | null = null;

async function withServer(fn: (server: TlsServer) => Promise<void>): Promise<void> {
  const stalled = new Promise<void>((resolve) => (stall = resolve));
  const server = await startTlsServer(async (request) => {
    const path = new URL(request.url).pathname;
    switch (path) {
      case "/hello":
        return new Response("hello from good.test", { headers: { "content-type": "text/plain" } });
      case "/to-other":
        return Response.redirect("https://other.test/landed", 302);
      case "/to-same":
        return new Response(null, { status: 301, headers: { location: "/hello" } });
      case "/to-http":
        return new Response(null, { status: 302, headers: { location: "http://good.test/hello" } });
      case "/loop":
        return new Response(null, { status: 302, headers: { location: "/loop" } });
      case "/big":
        return new Response("x".repeat(50_000));
      case "/missing":
        return new Response("no such page", { status: 404 });
      case "/slow":
        await stalled;
        return new Response("late");
      default:
        return new Response("unexpected", { status: 500 });
    }
  });
  try {
    await fn(server);
  } finally {
    stall?.();
    await server.close();
  }
}

Deno.test("http_fetch reaches an allowed host over https with the status, type and body", async () => {
  await withServer(async (server) => {
    const got = await fetcher(server).fetch("https://good.test/hello", ["good.test"]);
    assertEquals(got, { content: "HTTP 200 text/plain\n\nhello from good.test", truncated: false });
    const missing = await fetcher(server).fetch("https://good.test/missing", ["*.test"]);
    assertStringIncludes(missing.content, "HTTP 404");
  });
});

Deno.test("http_fetch refuses a host outside the grant's patterns and sends nothing", async () => {
  await withServer(async (server) => {
    await assertRejects(
      () => fetcher(server).fetch("https://other.test/hello", ["good.test", "*.good.test"]),
      RunError,
      FETCH_ERRORS.hostNotGranted,
    );
    assertEquals(server.requests, []);
  });
});

Deno.test("a redirect to another host is refused before it is followed", async () => {
  await withServer(async (server) => {
    await assertRejects(
      () => fetcher(server).fetch("https://good.test/to-other", ["good.test"]),
      RunError,
      FETCH_ERRORS.redirectRefused,
    );
    assertEquals(server.requests, ["good.test/to-other"]);
    // Granted both hosts, the same redirect is followed: the refusal was the grant's.
    const followed = fetcher(server).fetch("https://good.test/to-other", [
      "good.test",
      "other.test",
    ]);
    assertStringIncludes((await followed).content, "HTTP 500");
    assertEquals(server.requests.at(-1), "other.test/landed");
  });
});

Deno.test("a redirect on the same host is followed; to http or in a loop it is not", async () => {
  await withServer(async (server) => {
    const same = await fetcher(server).fetch("https://good.test/to-same", ["good.test"]);
    assertStringIncludes(same.content, "hello from good.test");
    await assertRejects(
      () => fetcher(server).fetch("https://good.test/to-http", ["good.test"]),
      RunError,
      FETCH_ERRORS.redirectRefused,
    );
    await assertRejects(
      () => fetcher(server, { maxRedirects: 3 }).fetch("https://good.test/loop", ["good.test"]),
      RunError,
      FETCH_ERRORS.tooManyRedirects,
    );
    assertEquals(server.requests.filter((r) => r === "good.test/loop").length, 4);
  });
});

Deno.test("a host at a loopback address is refused unless the owner allows that host", async () => {
  await withServer(async (server) => {
    await assertRejects(
      () =>
        fetcher(server, { allowPrivateHosts: ["other.test"] })
          .fetch("https://good.test/hello", ["good.test"]),
      RunError,
      FETCH_ERRORS.privateAddress,
    );
    assertEquals(server.requests, []);
  });
});

Deno.test("a response past the size cap is cut and marked truncated", async () => {
  await withServer(async (server) => {
    const got = await fetcher(server, { maxBytes: 1000 }).fetch("https://good.test/big", [
      "good.test",
    ]);
    assertEquals(got.truncated, true);
    assertEquals(got.content, `HTTP 200 text/plain;charset=UTF-8\n\n${"x".repeat(1000)}`);
  });
});

Deno.test("a fetch that passes the time limit is stopped with a fixed sentence", async () => {
  await withServer(async (server) => {
    const started = performance.now();
    await assertRejects(
      () => fetcher(server, { timeoutMs: 300 }).fetch("https://good.test/slow", ["good.test"]),
      RunError,
      FETCH_ERRORS.timedOut,
    );
    assert(performance.now() - started < 3000);
  });
});

Deno.test("a certificate the fetcher's CAs do not vouch for is refused", async () => {
  await withServer(async (server) => {
    const systemCas = new HttpFetcher(SETTINGS, { resolve: resolveLocal, port: server.port });
    await assertRejects(
      () => systemCas.fetch("https://good.test/hello", ["good.test"]),
      RunError,
      FETCH_ERRORS.unreachable,
    );
  });
});

Deno.test("restricted addresses: loopback, private, link-local, unique-local and their kin", () => {
  const refused = [
    "127.0.0.1",
    "127.255.0.9",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.100.100.100",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd12:3456::1",
    "fc00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.1.2.3",
    "64:ff9b::192.168.0.1",
    "not an address",
  ];
  const reached = [
    "1.1.1.1",
    "8.8.8.8",
    "172.32.0.1",
    "192.169.0.1",
    "2606:4700::1111",
    "::ffff:8.8.8.8",
  ];
  for (const address of refused) assertEquals(isRestrictedAddress(address), true, address);
  for (const address of reached) assertEquals(isRestrictedAddress(address), false, address);
});

/** Addresses outside every refused range, assigned to lo in a network namespace of the test's own. */
const OWN_V4 = "203.0.113.7";
const OWN_V6 = "2001:db8::7";

Deno.test({
  name:
    "as root, in a network namespace of its own: an address assigned to the box (v4 and v6, in no private range) is refused with the blocked-address sentence and nothing is sent; allowed for the host, the same fetch reaches it",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const probe = new URL("./own_address_probe.ts", import.meta.url).pathname;
    const setup = `ip link set lo up && ip addr add ${OWN_V4}/32 dev lo && ` +
      `ip -6 addr add ${OWN_V6}/128 dev lo nodad && exec "$0" run --quiet --allow-all "$@"`;
    const out = await new Deno.Command("unshare", {
      args: ["--net", "sh", "-c", setup, Deno.execPath(), probe, OWN_V4, OWN_V6],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, stderr);
    const lines: ProbeLine[] = new TextDecoder().decode(out.stdout).trim().split("\n")
      .map((line) => JSON.parse(line));
    assertEquals(lines.map((line) => line.address), [OWN_V4, OWN_V6], stderr);
    for (const line of lines) {
      assertEquals(isRestrictedAddress(line.address), false, line.address);
      assertEquals(line.ordinary, `refused: ${FETCH_ERRORS.privateAddress}`, line.address);
      assertEquals(line.requests, [], `${line.address} was sent a request`);
      // The server was there all along: the refusal above was http_fetch's.
      assertStringIncludes(line.allowed, "the box itself", line.address);
    }
  },
});

Deno.test("the core role may read the box's own addresses, which http_fetch refuses", async () => {
  await withHome(async (home) => {
    const config = loadConfig({ home, env: { BOX_VAULT: `${home}/vault.env` }, root: false });
    const status = await runRole({
      role: "core",
      permissions: ROLE_TABLE.serve.permissions({ config }),
      entry: new URL("./box_addresses_role.ts", import.meta.url),
      args: {},
    });
    assertEquals(status, 0);
  }, { prefix: "gurt-fetch-role-" });
});

Deno.test("where the box's own addresses cannot be read, a host the owner did not allow is refused, fail-closed, and nothing is sent", async () => {
  await withServer(async (server) => {
    const blind = new HttpFetcher({ ...SETTINGS, allowPrivateHosts: ["other.test"] }, {
      ca: server.ca,
      resolve: resolveLocal,
      port: server.port,
      boxAddresses: () => {
        throw new Deno.errors.NotCapable("no networkInterfaces");
      },
    });
    await assertRejects(
      () => blind.fetch("https://good.test/hello", ["good.test"]),
      RunError,
      FETCH_ERRORS.boxAddressesUnknown,
    );
    assertEquals(server.requests, []);
    // A host the owner allowed needs no such reading.
    const allowed = await blind.fetch("https://other.test/hello", ["other.test"]);
    assertStringIncludes(allowed.content, "hello from good.test");
  });
});
