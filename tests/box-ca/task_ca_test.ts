/**
 * A task's own CA (makeTaskCa): a one-year ECDSA CA whose critical name constraints permit exactly
 * the task's hosts and no IP address, whose leaves for those hosts openssl and curl accept, and
 * which signs no other name. Its constraints are proved by the verifiers themselves: the task CA's
 * extensions, carried byte for byte onto a key the test holds, make openssl refuse a leaf for
 * any other name. BoxCa.bundleWith gives the bundle a task with credentials trusts: the box CA,
 * its own CA, the system roots.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import {
  BoxCaError,
  type Leaf,
  makeTaskCa,
  openBoxCa,
  SYSTEM_ROOTS,
} from "../../mod/box-ca/mod.ts";
import {
  type CaSigner,
  mintLeaf,
  nameConstraintsOf,
  parseCertificate,
} from "../../mod/box-ca/certificates.ts";
import { x509 } from "../../mod/box-ca/x509.ts";
import { caHome, opensslText, ROOTS_TEXT, run } from "./ca_kit.ts";

const HOSTS = ["gitlab.example.org", "api.github.com", "gitlab.example.org"];

/** `openssl verify -x509_strict` of `leafPem` against `caPem` alone, with these options. */
async function verify(
  caPem: string,
  leafPem: string,
  extra: string[] = [],
): Promise<{ ok: boolean; said: string }> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-task-ca-verify-" });
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, caPem);
    await Deno.writeTextFile(`${dir}/leaf.pem`, leafPem);
    const out = await run(
      "openssl",
      ["verify", "-x509_strict", ...extra, "-CAfile", "ca.pem", "leaf.pem"],
      { cwd: dir },
    );
    return { ok: out.code === 0, said: out.stdout + out.stderr };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * A CA with the subject and every extension of `caPem` exactly as they are, but a key the test
 * holds: what the task CA's own key would sign, with its constraints, for any name.
 */
async function sameCaOtherKey(caPem: string): Promise<{ pem: string; signer: CaSigner }> {
  const original = parseCertificate(caPem);
  const P256 = { name: "ECDSA", namedCurve: "P-256" };
  const keys = await crypto.subtle.generateKey(P256, true, ["sign", "verify"]);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01a2b3c4d5e6f708",
    name: original.subjectName,
    notBefore: original.notBefore,
    notAfter: original.notAfter,
    keys,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: original.extensions,
  });
  const ski = certificate.getExtension(x509.SubjectKeyIdentifierExtension);
  assert(ski !== null, "the task CA has no subject key identifier");
  return {
    pem: certificate.toString("pem") + "\n",
    signer: { certificate, privateKey: keys.privateKey, keyId: ski.keyId },
  };
}

/** A TLS server on 127.0.0.1 holding `leaf`, answering "reached". */
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

/** curl of https://HOST:PORT/ resolved to 127.0.0.1, trusting only the file `cacert`. */
function curl(cacert: string, host: string, port: number) {
  return run("curl", [
    "-sS",
    "-m",
    "10",
    "--cacert",
    cacert,
    "--resolve",
    `${host}:${port}:127.0.0.1`,
    `https://${host}:${port}/`,
  ]);
}

Deno.test("a task CA is CN 'gurt task CA <8 hex>', one year from its clock, a critical CA:TRUE pathlen:0, critical keyCertSign and cRLSign, and critical name constraints permitting exactly its hosts (deduplicated) and excluding every IP address", async () => {
  const now = new Date("2026-03-01T12:00:00Z");
  const ca = await makeTaskCa(HOSTS, { clock: () => now });
  assertEquals(ca.hosts, ["api.github.com", "gitlab.example.org"]);
  const text = await opensslText(ca.caPem);
  assertStringIncludes(text, "ASN1 OID: prime256v1");
  assert(/Subject: CN = gurt task CA [0-9a-f]{8}\n/.test(text), text);
  assert(/Issuer: CN = gurt task CA [0-9a-f]{8}\n/.test(text), text);
  assertStringIncludes(
    text,
    "X509v3 Basic Constraints: critical\n                CA:TRUE, pathlen:0\n",
  );
  assertStringIncludes(
    text,
    "X509v3 Key Usage: critical\n                Certificate Sign, CRL Sign\n",
  );
  const permitted = /X509v3 Name Constraints: critical\n\s+Permitted:\n((?:\s+DNS:.*\n)+)/.exec(
    text,
  );
  assert(permitted, text);
  assertEquals(permitted[1].trim().split(/\s+/), ["DNS:api.github.com", "DNS:gitlab.example.org"]);
  assertStringIncludes(
    text,
    "Excluded:\n                  IP:0.0.0.0/0.0.0.0\n                  IP:0:0:0:0:0:0:0:0/0:0:0:0:0:0:0:0\n",
  );
  assertEquals(nameConstraintsOf(parseCertificate(ca.caPem)), {
    permitted: ["api.github.com", "gitlab.example.org"],
    excluded: ["0.0.0.0/0", "::/0"],
  });
  const certificate = parseCertificate(ca.caPem);
  assertEquals(certificate.notBefore.toISOString(), "2026-03-01T11:00:00.000Z");
  assertEquals(certificate.notAfter.toISOString(), "2027-03-01T12:00:00.000Z");
});

Deno.test("a task CA's leaf for each of its hosts passes openssl verify -x509_strict -verify_hostname against the task CA alone, and not against another task's CA", async () => {
  const ca = await makeTaskCa(HOSTS);
  const other = await makeTaskCa(HOSTS);
  assert(ca.caPem !== other.caPem, "two tasks were given the same CA");
  for (const host of ca.hosts) {
    const leaf = await ca.leaf(host);
    assert(await ca.leaf(host) === leaf, `the leaf for ${host} is not cached`);
    const text = await opensslText(leaf.certPem);
    assertStringIncludes(text, `DNS:${host}`);
    assertStringIncludes(text, "X509v3 Key Usage: critical\n                Digital Signature\n");
    assertStringIncludes(text, "TLS Web Server Authentication");
    const good = await verify(ca.caPem, leaf.certPem, ["-verify_hostname", host]);
    assert(good.ok, good.said);
    const crossed = await verify(other.caPem, leaf.certPem);
    assert(!crossed.ok, `another task's CA vouched for ${host}: ${crossed.said}`);
  }
});

Deno.test("a task CA signs no name but its hosts, and its constraints make openssl refuse a leaf it signed for any other name", async () => {
  const ca = await makeTaskCa(HOSTS);
  for (const name of ["evil.example.com", "API.GITHUB.COM", "github.com", "127.0.0.1", ""]) {
    await assertRejects(
      () => ca.leaf(name),
      BoxCaError,
      "is not one of this task's credential hosts",
    );
  }
  await assertRejects(() => makeTaskCa([]), BoxCaError, "needs at least one host");
  // The task CA's extensions on a key the test holds: a leaf for one of its hosts verifies (so
  // the copy is a working CA), one for another name is refused on the constraints alone.
  const copy = await sameCaOtherKey(ca.caPem);
  const now = new Date();
  const allowed = await mintLeaf(copy.signer, "api.github.com", now);
  const good = await verify(copy.pem, allowed.certPem, ["-verify_hostname", "api.github.com"]);
  assert(good.ok, good.said);
  for (const name of ["evil.example.com", "github.com", "api.anthropic.com"]) {
    const leaf = await mintLeaf(copy.signer, name, now);
    const refused = await verify(copy.pem, leaf.certPem);
    assert(!refused.ok, `a leaf for ${name} was accepted: ${refused.said}`);
    assertStringIncludes(refused.said, "permitted subtree violation");
  }
  const address = await mintLeaf(copy.signer, "127.0.0.1", now);
  const refused = await verify(copy.pem, address.certPem);
  assert(!refused.ok, `a leaf for 127.0.0.1 was accepted: ${refused.said}`);
  assertStringIncludes(refused.said, "excluded subtree violation");
});

Deno.test("bundleWith is the box CA, the task's CA and the system roots; with it curl reaches a task host on the task CA's leaf and a model host on the box CA's, and refuses another task's leaf", async () => {
  const home = await caHome();
  const task = await makeTaskCa(HOSTS);
  const other = await makeTaskCa(HOSTS);
  // The stand-in roots file for the text; the machine's roots (which curl can read) for TLS.
  const standIn = await openBoxCa(home.ca, { systemRoots: home.roots });
  assertEquals(standIn.bundleWith(task.caPem), standIn.caPem + task.caPem + ROOTS_TEXT);
  assertEquals(standIn.bundleWith(task.caPem.trimEnd()), standIn.caPem + task.caPem + ROOTS_TEXT);
  const box = await openBoxCa(home.ca, { systemRoots: SYSTEM_ROOTS });
  const roots = await Deno.readTextFile(SYSTEM_ROOTS);
  const bundle = box.bundleWith(task.caPem);
  assertEquals(bundle, box.caPem + task.caPem + roots);
  // bundle.pem on disk is unchanged: only this task trusts its CA.
  assertEquals(await Deno.readTextFile(box.bundlePath), box.caPem + roots);
  const bundlePath = `${home.home}/task-bundle.pem`;
  await Deno.writeTextFile(bundlePath, bundle);
  const github = serveLeaf(await task.leaf("api.github.com"));
  const anthropic = serveLeaf(await box.leaf("api.anthropic.com"));
  const stranger = serveLeaf(await other.leaf("api.github.com"));
  try {
    const one = await curl(bundlePath, "api.github.com", github.port);
    assertEquals([one.code, one.stdout], [0, "reached"], one.stderr);
    const two = await curl(bundlePath, "api.anthropic.com", anthropic.port);
    assertEquals([two.code, two.stdout], [0, "reached"], two.stderr);
    const three = await curl(bundlePath, "api.github.com", stranger.port);
    assertEquals(three.code, 60, three.stderr);
    // The box's own bundle does not trust the task CA.
    const four = await curl(box.bundlePath, "api.github.com", github.port);
    assertEquals(four.code, 60, four.stderr);
  } finally {
    await github.close();
    await anthropic.close();
    await stranger.close();
    await home.remove();
  }
});
