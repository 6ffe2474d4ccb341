/**
 * The box CA's files (issue 19): made once with the right modes and extensions, read (not remade)
 * at later starts, the bundle rewritten at every start, and every unsafe or damaged file refused
 * with a sentence that points at the runbook.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { BoxCaError, INTERCEPTED_HOSTS, openBoxCa } from "../../mod/box-ca/mod.ts";
import { caHome, modeOf, opensslText, ROOTS_TEXT, run } from "./ca_kit.ts";

Deno.test("the first open makes ca/ (0700) with ca.key (0600, PKCS#8) and ca.pem and bundle.pem (0644), owned by the running user", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    assertEquals(await modeOf(home.ca), 0o700);
    assertEquals(await modeOf(`${home.ca}/ca.key`), 0o600);
    assertEquals(await modeOf(`${home.ca}/ca.pem`), 0o644);
    assertEquals(await modeOf(`${home.ca}/bundle.pem`), 0o644);
    for (const name of ["ca.key", "ca.pem", "bundle.pem"]) {
      const info = await Deno.lstat(`${home.ca}/${name}`);
      assert(info.isFile, `${name} is a regular file`);
      assertEquals(info.uid, Deno.uid());
    }
    const key = await Deno.readTextFile(`${home.ca}/ca.key`);
    assert(key.startsWith("-----BEGIN PRIVATE KEY-----\n"), key.slice(0, 40));
    assertEquals(await Deno.readTextFile(`${home.ca}/ca.pem`), ca.caPem);
    assertEquals(ca.bundlePath, `${home.ca}/bundle.pem`);
    assertEquals([...Deno.readDirSync(home.ca)].map((e) => e.name).sort(), [
      "bundle.pem",
      "ca.key",
      "ca.pem",
    ]);
  } finally {
    await home.remove();
  }
});

Deno.test("the CA is ECDSA P-256, CN 'gurt box CA <8 hex>', 10 years, a critical CA:TRUE pathlen:0, critical keyCertSign and cRLSign, SKI, and critical name constraints permitting exactly the three model hosts and excluding every IP address", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    const text = await opensslText(ca.caPem);
    assertStringIncludes(text, "Public Key Algorithm: id-ecPublicKey");
    assertStringIncludes(text, "ASN1 OID: prime256v1");
    assertStringIncludes(text, "Signature Algorithm: ecdsa-with-SHA256");
    assert(/Subject: CN = gurt box CA [0-9a-f]{8}\n/.test(text), text);
    assert(/Issuer: CN = gurt box CA [0-9a-f]{8}\n/.test(text), text);
    assertStringIncludes(
      text,
      "X509v3 Basic Constraints: critical\n                CA:TRUE, pathlen:0\n",
    );
    assertStringIncludes(
      text,
      "X509v3 Key Usage: critical\n                Certificate Sign, CRL Sign\n",
    );
    assertStringIncludes(text, "X509v3 Subject Key Identifier: \n");
    const permitted = /X509v3 Name Constraints: critical\n\s+Permitted:\n((?:\s+DNS:.*\n)+)/.exec(
      text,
    );
    assert(permitted, text);
    assertEquals(
      permitted[1].trim().split(/\s+/).sort(),
      Object.keys(INTERCEPTED_HOSTS).map((host) => `DNS:${host}`).sort(),
    );
    assertStringIncludes(
      text,
      "Excluded:\n                  IP:0.0.0.0/0.0.0.0\n                  IP:0:0:0:0:0:0:0:0/0:0:0:0:0:0:0:0\n",
    );
    const notBefore = Date.parse(/Not Before: (.* GMT)\n/.exec(text)![1]);
    const notAfter = Date.parse(/Not After : (.* GMT)\n/.exec(text)![1]);
    const years = (notAfter - notBefore) / (365.25 * 24 * 3600 * 1000);
    assert(years > 9.99 && years < 10.01, `validity ${years} years`);
    assert(Math.abs(notBefore - Date.now()) < 2 * 3600 * 1000, `notBefore ${notBefore}`);
  } finally {
    await home.remove();
  }
});

Deno.test("a second open reads the same CA, and two boxes make different CAs", async () => {
  const home = await caHome();
  const other = await caHome();
  try {
    const first = await openBoxCa(home.ca, { systemRoots: home.roots });
    const key = await Deno.readTextFile(`${home.ca}/ca.key`);
    const second = await openBoxCa(home.ca, { systemRoots: home.roots });
    assertEquals(second.caPem, first.caPem);
    assertEquals(await Deno.readTextFile(`${home.ca}/ca.key`), key);
    const third = await openBoxCa(other.ca, { systemRoots: other.roots });
    assert(third.caPem !== first.caPem, "a new box gets its own CA");
  } finally {
    await home.remove();
    await other.remove();
  }
});

Deno.test("bundle.pem is the CA then the system roots, rewritten at every open", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    assertEquals(await Deno.readTextFile(ca.bundlePath), ca.caPem + ROOTS_TEXT);
    assert(ca.caPem.endsWith("-----END CERTIFICATE-----\n"), ca.caPem);
    const changed = ROOTS_TEXT + "# a root added later\n";
    await Deno.writeTextFile(home.roots, changed);
    const again = await openBoxCa(home.ca, { systemRoots: home.roots });
    assertEquals(await Deno.readTextFile(again.bundlePath), ca.caPem + changed);
    assertEquals(await modeOf(again.bundlePath), 0o644);
  } finally {
    await home.remove();
  }
});

Deno.test("without systemRoots the bundle carries the machine's /etc/ssl/certs/ca-certificates.crt", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca);
    const roots = await Deno.readTextFile("/etc/ssl/certs/ca-certificates.crt");
    assertEquals(await Deno.readTextFile(ca.bundlePath), ca.caPem + roots);
  } finally {
    await home.remove();
  }
});

Deno.test("a group-writable ca.key stops the open with a sentence pointing at the runbook", async () => {
  const home = await caHome();
  try {
    await openBoxCa(home.ca, { systemRoots: home.roots });
    await Deno.chmod(`${home.ca}/ca.key`, 0o620);
    const error = await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `${home.ca}/ca.key has mode 0620`,
    );
    assert(error.message.endsWith("see runbook.md#box-ca"), error.message);
  } finally {
    await home.remove();
  }
});

Deno.test("a ca.key that others can read, or a group-writable ca.pem, is refused", async () => {
  const home = await caHome();
  try {
    await openBoxCa(home.ca, { systemRoots: home.roots });
    await Deno.chmod(`${home.ca}/ca.key`, 0o604);
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `${home.ca}/ca.key has mode 0604, so group or others can read or change the box CA's key`,
    );
    await Deno.chmod(`${home.ca}/ca.key`, 0o600);
    await Deno.chmod(`${home.ca}/ca.pem`, 0o664);
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `${home.ca}/ca.pem has mode 0664, so group or others can change it`,
    );
    await Deno.chmod(`${home.ca}/ca.pem`, 0o644);
    await Deno.chmod(home.ca, 0o770);
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `${home.ca} has mode 0770, so group or others can change`,
    );
    await Deno.chmod(home.ca, 0o700);
    await openBoxCa(home.ca, { systemRoots: home.roots });
  } finally {
    await home.remove();
  }
});

Deno.test("a symlinked ca.pem, or a ca.key that is not a regular file, is refused", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    await Deno.writeTextFile(`${home.home}/elsewhere.pem`, ca.caPem, { mode: 0o644 });
    await Deno.remove(`${home.ca}/ca.pem`);
    await Deno.symlink(`${home.home}/elsewhere.pem`, `${home.ca}/ca.pem`);
    const error = await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `${home.ca}/ca.pem is a symbolic link`,
    );
    assert(error.message.endsWith("see runbook.md#box-ca"), error.message);
    // The link was neither followed nor replaced.
    assert((await Deno.lstat(`${home.ca}/ca.pem`)).isSymlink);

    await Deno.remove(`${home.ca}/ca.pem`);
    await Deno.writeTextFile(`${home.ca}/ca.pem`, ca.caPem, { mode: 0o644 });
    const key = await Deno.readTextFile(`${home.ca}/ca.key`);
    await Deno.remove(`${home.ca}/ca.key`);
    await Deno.mkdir(`${home.ca}/ca.key`);
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `${home.ca}/ca.key is not a regular file`,
    );
    await Deno.remove(`${home.ca}/ca.key`);
    await Deno.writeTextFile(`${home.ca}/ca.key`, key, { mode: 0o600 });
    assertEquals((await openBoxCa(home.ca, { systemRoots: home.roots })).caPem, ca.caPem);
  } finally {
    await home.remove();
  }
});

Deno.test("a symlinked ca/ folder is refused", async () => {
  const home = await caHome();
  try {
    await Deno.mkdir(`${home.home}/real`, { mode: 0o700 });
    await Deno.symlink(`${home.home}/real`, home.ca);
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `${home.ca} is a symbolic link`,
    );
    assertEquals([...Deno.readDirSync(`${home.home}/real`)], []);
  } finally {
    await home.remove();
  }
});

Deno.test("a corrupt ca.pem or ca.key, or a key that is not the certificate's, is refused with a clear sentence", async () => {
  const home = await caHome();
  const other = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    const key = await Deno.readTextFile(`${home.ca}/ca.key`);
    await Deno.writeTextFile(`${home.ca}/ca.pem`, "not a certificate\n");
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `the box CA certificate ${home.ca}/ca.pem cannot be read as a PEM certificate`,
    );
    await Deno.writeTextFile(`${home.ca}/ca.pem`, ca.caPem);
    await Deno.writeTextFile(`${home.ca}/ca.key`, key.slice(0, 60) + "\n");
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `the box CA key ${home.ca}/ca.key cannot be read as a PKCS#8 ECDSA P-256 key`,
    );
    await openBoxCa(other.ca, { systemRoots: other.roots });
    await Deno.writeTextFile(`${home.ca}/ca.key`, await Deno.readTextFile(`${other.ca}/ca.key`));
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `the box CA key ${home.ca}/ca.key is not the key of ${home.ca}/ca.pem`,
    );
  } finally {
    await home.remove();
    await other.remove();
  }
});

Deno.test("a ca.pem without its ca.key is refused rather than replaced", async () => {
  const home = await caHome();
  try {
    const ca = await openBoxCa(home.ca, { systemRoots: home.roots });
    await Deno.remove(`${home.ca}/ca.key`);
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `${home.ca}/ca.pem exists but its key ${home.ca}/ca.key does not`,
    );
    assertEquals(await Deno.readTextFile(`${home.ca}/ca.pem`), ca.caPem);
  } finally {
    await home.remove();
  }
});

Deno.test("a missing system roots file stops the open with a sentence pointing at the runbook", async () => {
  const home = await caHome();
  try {
    await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: `${home.home}/no-such-roots.crt` }),
      BoxCaError,
      `the system roots ${home.home}/no-such-roots.crt cannot be read`,
    );
  } finally {
    await home.remove();
  }
});

Deno.test("a CA in ca/ that permits any name (one openssl made, not gurt) is refused, not used", async () => {
  const home = await caHome();
  try {
    await Deno.mkdir(home.ca, { mode: 0o700 });
    const made = await run("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "3650",
      "-subj",
      "/CN=not gurt",
    ], { cwd: home.ca });
    assertEquals(made.code, 0, made.stderr);
    await Deno.chmod(`${home.ca}/ca.key`, 0o600);
    await Deno.chmod(`${home.ca}/ca.pem`, 0o644);
    const error = await assertRejects(
      () => openBoxCa(home.ca, { systemRoots: home.roots }),
      BoxCaError,
      `the box CA certificate ${home.ca}/ca.pem is not one this gurt makes`,
    );
    assertStringIncludes(error.message, "(it permits any name)");
    assert(error.message.endsWith("see runbook.md#box-ca"), error.message);
  } finally {
    await home.remove();
  }
});
