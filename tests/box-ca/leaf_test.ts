/**
 * The box CA's leaves (issue 19): what each holds (checked by openssl, `-x509_strict` included),
 * the refusal of any name the box does not intercept, the per-host cache, one mint for concurrent
 * callers, and a new leaf once the cached one is within a day of its end.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { BoxCaError, INTERCEPTED_HOSTS, openBoxCa } from "../../mod/box-ca/mod.ts";
import { mintLeafForAnyName } from "../../mod/box-ca/mint_any.ts";
import { caHome, opensslText, run } from "./ca_kit.ts";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

/** `openssl verify -x509_strict` of `leafPem` against `caPem` alone. */
async function verify(caPem: string, leafPem: string): Promise<{ ok: boolean; said: string }> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-box-ca-verify-" });
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, caPem);
    await Deno.writeTextFile(`${dir}/leaf.pem`, leafPem);
    const out = await run("openssl", [
      "verify",
      "-x509_strict",
      "-CAfile",
      "ca.pem",
      "leaf.pem",
    ], { cwd: dir });
    return { ok: out.code === 0, said: out.stdout + out.stderr };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The instant `openssl x509 -text` prints after `label` in `text` (as "Dec 31 03:31:26 2026 GMT"). */
function dateAfter(text: string, label: string): number {
  const match = new RegExp(`${label}(.* GMT)\\n`).exec(text);
  assert(match, `no ${label} in ${text}`);
  return Date.parse(match[1]);
}

Deno.test("each intercepted host's leaf passes openssl verify -x509_strict against ca.pem alone", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    for (const host of Object.keys(INTERCEPTED_HOSTS)) {
      const leaf = await ca.leaf(host);
      const result = await verify(ca.caPem, leaf.certPem);
      assert(result.ok, `${host}: ${result.said}`);
      assertStringIncludes(result.said, "leaf.pem: OK");
    }
  } finally {
    await home.remove();
  }
});

Deno.test("a leaf is ECDSA P-256 with CN and SAN the host, AKI = the CA's SKI, its own SKI, CA:FALSE, critical digitalSignature, serverAuth, a positive 16-byte serial, from now-1h to now+30 days", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    const before = Date.now();
    const leaf = await ca.leaf("api.openai.com");
    const text = await opensslText(leaf.certPem);
    const caText = await opensslText(ca.caPem);
    assertStringIncludes(text, "ASN1 OID: prime256v1");
    assertStringIncludes(text, "Signature Algorithm: ecdsa-with-SHA256");
    assertStringIncludes(text, "Subject: CN = api.openai.com\n");
    assertEquals(/Issuer: (.*)\n/.exec(text)![1], /Subject: (.*)\n/.exec(caText)![1]);
    assertStringIncludes(
      text,
      "X509v3 Subject Alternative Name: \n                DNS:api.openai.com\n",
    );
    assertStringIncludes(text, "X509v3 Basic Constraints: \n                CA:FALSE\n");
    assertStringIncludes(text, "X509v3 Key Usage: critical\n                Digital Signature\n");
    assertStringIncludes(
      text,
      "X509v3 Extended Key Usage: \n                TLS Web Server Authentication\n",
    );
    const caSki = /X509v3 Subject Key Identifier: \n\s+(\S+)\n/.exec(caText)![1];
    const aki = /X509v3 Authority Key Identifier: \n\s+(?:keyid:)?(\S+)\n/.exec(text)![1];
    assertEquals(aki, caSki);
    const ski = /X509v3 Subject Key Identifier: \n\s+(\S+)\n/.exec(text)![1];
    assert(ski !== caSki, "the leaf has its own SKI");
    const serial = (await run("openssl", ["x509", "-noout", "-serial"], { stdin: leaf.certPem }))
      .stdout.trim().replace("serial=", "");
    assertEquals(serial.length, 32, serial);
    assert(parseInt(serial.slice(0, 2), 16) < 0x80 && parseInt(serial.slice(0, 2), 16) > 0, serial);
    const notBefore = dateAfter(text, "Not Before: ");
    const notAfter = dateAfter(text, "Not After : ");
    assert(Math.abs(notBefore - (before - HOUR)) < 60_000, `notBefore ${new Date(notBefore)}`);
    assert(Math.abs(notAfter - (before + 30 * DAY)) < 60_000, `notAfter ${new Date(notAfter)}`);
    // The key is PKCS#8 and is the certificate's.
    assert(leaf.keyPem.startsWith("-----BEGIN PRIVATE KEY-----\n"), leaf.keyPem.slice(0, 40));
    const fromKey = await run("openssl", ["pkey", "-pubout"], { stdin: leaf.keyPem });
    const fromCert = await run("openssl", ["x509", "-noout", "-pubkey"], { stdin: leaf.certPem });
    assertEquals(fromKey.stdout, fromCert.stdout);
    // The chain is the leaf alone.
    assertEquals(leaf.certPem.match(/BEGIN CERTIFICATE/g)?.length, 1);
  } finally {
    await home.remove();
  }
});

Deno.test("two leaves for the same host (after a re-mint) have different keys and serials", async () => {
  const home = await caHome();
  try {
    let now = new Date();
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots, clock: () => now });
    const first = await ca.leaf("api.factory.ai");
    now = new Date(now.getTime() + 30 * DAY);
    const second = await ca.leaf("api.factory.ai");
    assert(first.keyPem !== second.keyPem, "a fresh key per leaf");
    const serialOf = async (pem: string) =>
      (await run("openssl", ["x509", "-noout", "-serial"], { stdin: pem })).stdout;
    assert((await serialOf(first.certPem)) !== (await serialOf(second.certPem)));
  } finally {
    await home.remove();
  }
});

Deno.test("leaf() for a name the box does not intercept throws, and the test-only minter still signs one that openssl refuses on the name constraint", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    for (
      const name of [
        "evil.example.com",
        "API.ANTHROPIC.COM",
        "x.api.anthropic.com",
        "toString",
        "__proto__",
        "",
      ]
    ) {
      await assertRejects(
        () => ca.leaf(name),
        BoxCaError,
        "is not one of the hosts the box intercepts",
      );
    }
    const evil = await mintLeafForAnyName(ca, "evil.example.com");
    const text = await opensslText(evil.certPem);
    assertStringIncludes(text, "DNS:evil.example.com");
    const result = await verify(ca.caPem, evil.certPem);
    assert(!result.ok, result.said);
    assertStringIncludes(result.said, "permitted subtree violation");
  } finally {
    await home.remove();
  }
});

Deno.test("the cache gives the same leaf object for a host; concurrent first calls mint once", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    const calls = Array.from({ length: 8 }, () => ca.leaf("api.anthropic.com"));
    const leaves = await Promise.all(calls);
    for (const leaf of leaves) assert(leaf === leaves[0], "one mint for concurrent callers");
    assert((await ca.leaf("api.anthropic.com")) === leaves[0], "cached");
    const other = await ca.leaf("api.openai.com");
    assert(other.certPem !== leaves[0].certPem, "a leaf per host");
  } finally {
    await home.remove();
  }
});

Deno.test("a cached leaf is kept until it is within one day of its end, then minted anew (once for concurrent callers)", async () => {
  const home = await caHome();
  try {
    const start = Date.now();
    let now = new Date(start);
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots, clock: () => now });
    const first = await ca.leaf("api.anthropic.com");
    now = new Date(start + 29 * DAY - 60_000);
    assert((await ca.leaf("api.anthropic.com")) === first, "kept with more than a day left");
    now = new Date(start + 29 * DAY + 60_000);
    const [a, b] = await Promise.all([ca.leaf("api.anthropic.com"), ca.leaf("api.anthropic.com")]);
    assert(a !== first, "minted anew within a day of its end");
    assert(a === b, "one re-mint for concurrent callers");
    const text = await opensslText(a.certPem);
    const notAfter = dateAfter(text, "Not After : ");
    assert(Math.abs(notAfter - (now.getTime() + 30 * DAY)) < 60_000, text);
  } finally {
    await home.remove();
  }
});
