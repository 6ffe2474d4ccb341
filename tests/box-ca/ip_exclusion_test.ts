/**
 * The box CA's second lock (issue 36): its name constraints exclude every IPv4 and IPv6 address,
 * so a leaf it signed for an IP address is refused by openssl and curl, where dNSName constraints
 * alone say nothing of IP addresses. A CA made before the exclusions is kept as it is (tasks
 * trust it); one that excludes anything else is refused.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { BoxCaError, INTERCEPTED_HOSTS, openBoxCa } from "../../mod/box-ca/mod.ts";
import { mintLeafForAnyName } from "../../mod/box-ca/mint_any.ts";
import { nameConstraintsOf, parseCertificate } from "../../mod/box-ca/certificates.ts";
import {
  AsnConvert,
  GeneralName,
  GeneralSubtree,
  GeneralSubtrees,
  id_ce_nameConstraints,
  NameConstraints,
  x509,
} from "../../mod/box-ca/x509.ts";
import { caHome, opensslText, run } from "./ca_kit.ts";

/** `openssl verify -x509_strict` of `leafPem` against `caPem` alone. */
async function verify(caPem: string, leafPem: string): Promise<{ ok: boolean; said: string }> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-box-ca-verify-" });
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, caPem);
    await Deno.writeTextFile(`${dir}/leaf.pem`, leafPem);
    const out = await run("openssl", ["verify", "-x509_strict", "-CAfile", "ca.pem", "leaf.pem"], {
      cwd: dir,
    });
    return { ok: out.code === 0, said: out.stdout + out.stderr };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Writes into `dir` a CA of the kind gurt made before the IP exclusions (permitted dNSNames only),
 * or with `excluded` as its excluded subtrees; returns its certificate PEM.
 */
async function writeCa(dir: string, excluded: GeneralName[] = []): Promise<string> {
  const P256 = { name: "ECDSA", namedCurve: "P-256" };
  const keys = await crypto.subtle.generateKey(P256, true, ["sign", "verify"]);
  const permitted = new GeneralSubtrees(
    Object.keys(INTERCEPTED_HOSTS).map((host) =>
      new GeneralSubtree({ base: new GeneralName({ dNSName: host }) })
    ),
  );
  const constraints = new NameConstraints({
    permittedSubtrees: permitted,
    ...(excluded.length > 0
      ? {
        excludedSubtrees: new GeneralSubtrees(excluded.map((base) => new GeneralSubtree({ base }))),
      }
      : {}),
  });
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01a2b3c4d5e6f708",
    name: "CN=gurt box CA 0ld0ca00",
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + 3650 * 24 * 3_600_000),
    keys,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      new x509.Extension(id_ce_nameConstraints, true, AsnConvert.serialize(constraints)),
    ],
  });
  const certPem = certificate.toString("pem") + "\n";
  const der = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  await Deno.mkdir(dir, { mode: 0o700 });
  await Deno.writeTextFile(`${dir}/ca.key`, x509.PemConverter.encode(der, "PRIVATE KEY") + "\n", {
    mode: 0o600,
  });
  await Deno.writeTextFile(`${dir}/ca.pem`, certPem, { mode: 0o644 });
  return certPem;
}

Deno.test("a new box CA's name constraints exclude every IPv4 and IPv6 address, beside permitting the three model hosts", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    const constraints = nameConstraintsOf(parseCertificate(ca.caPem));
    assertEquals(constraints?.excluded, ["0.0.0.0/0", "::/0"]);
    assertEquals(constraints?.permitted.sort(), Object.keys(INTERCEPTED_HOSTS).sort());
    const text = await opensslText(ca.caPem);
    assertStringIncludes(
      text,
      "                Excluded:\n                  IP:0.0.0.0/0.0.0.0\n" +
        "                  IP:0:0:0:0:0:0:0:0/0:0:0:0:0:0:0:0\n",
    );
    // A second open keeps the same CA.
    assertEquals((await openBoxCa(home.ca, { systemRoots: home.roots })).caPem, ca.caPem);
  } finally {
    await home.remove();
  }
});

Deno.test("a leaf the box CA signed for an IP address is refused by openssl verify and by curl on the excluded subtree; its model-host leaves still pass", async () => {
  const home = await caHome();
  const ca = await openBoxCa(home.ca, { systemRoots: "/etc/ssl/certs/ca-certificates.crt" });
  const v4 = await mintLeafForAnyName(ca, "127.0.0.1");
  assertStringIncludes(await opensslText(v4.certPem), "IP Address:127.0.0.1");
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: v4.certPem,
    key: v4.keyPem,
    onListen: () => {},
    onError: () => new Response("error", { status: 500 }),
  }, () => new Response("reached"));
  try {
    for (const address of ["127.0.0.1", "::1", "2002:7f00:1::1"]) {
      const leaf = address === "127.0.0.1" ? v4 : await mintLeafForAnyName(ca, address);
      const result = await verify(ca.caPem, leaf.certPem);
      assert(!result.ok, `${address}: ${result.said}`);
      assertStringIncludes(result.said, "excluded subtree violation", address);
    }
    const curl = await run("curl", [
      "-sS",
      "-m",
      "10",
      "--cacert",
      ca.bundlePath,
      `https://127.0.0.1:${server.addr.port}/`,
    ]);
    assertEquals([curl.code, curl.stdout], [60, ""], curl.stderr);
    assertStringIncludes(curl.stderr, "excluded subtree violation");
    const good = await verify(ca.caPem, (await ca.leaf("api.anthropic.com")).certPem);
    assert(good.ok, good.said);
  } finally {
    await server.shutdown();
    await home.remove();
  }
});

Deno.test("a box CA made before the IP exclusions is kept as it is, byte for byte, and still signs its model hosts", async () => {
  const home = await caHome();
  try {
    const before = await writeCa(home.ca);
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    assertEquals(ca.caPem, before);
    assertEquals(await Deno.readTextFile(`${home.ca}/ca.pem`), before);
    assertEquals(nameConstraintsOf(parseCertificate(ca.caPem))?.excluded, []);
    const good = await verify(ca.caPem, (await ca.leaf("api.openai.com")).certPem);
    assert(good.ok, good.said);
  } finally {
    await home.remove();
  }
});

Deno.test("a box CA that excludes anything but every IP address is refused, not used", async () => {
  for (
    const excluded of [
      [new GeneralName({ iPAddress: "10.0.0.0/8" })],
      [new GeneralName({ iPAddress: "0.0.0.0/0" })],
      [new GeneralName({ dNSName: "evil.example" })],
    ]
  ) {
    const home = await caHome();
    try {
      await writeCa(home.ca, excluded);
      const error = await assertRejects(
        () => openBoxCa(home.ca, { systemRoots: home.roots }),
        BoxCaError,
        `the box CA certificate ${home.ca}/ca.pem is not one this gurt makes`,
      );
      assertStringIncludes(error.message, "exclude no name but the IP ranges 0.0.0.0/0 and ::/0");
      assert(error.message.endsWith("see runbook.md#box-ca"), error.message);
    } finally {
      await home.remove();
    }
  }
});
