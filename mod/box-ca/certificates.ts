/**
 * The box CA's certificates, made and checked with @peculiar/x509 over WebCrypto, ECDSA P-256
 * throughout. The CA may sign only the intercepted hosts (critical name constraints, which also
 * exclude every IP address) and no other CA (pathlen 0); each leaf has a fresh key, the host as CN
 * and SAN, and the CA's key identifier as its AKI (Python 3.13 refuses a leaf without one). No
 * file and no clock here: the caller gives the time.
 */
import {
  AsnConvert,
  GeneralName,
  GeneralSubtree,
  GeneralSubtrees,
  id_ce_nameConstraints,
  NameConstraints,
  x509,
} from "./x509.ts";

const P256: EcKeyImportParams = { name: "ECDSA", namedCurve: "P-256" };
const SIGNING: EcdsaParams = { name: "ECDSA", hash: "SHA-256" };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** How long a leaf is valid, from its minting. */
export const LEAF_LIFETIME_MS = 30 * DAY;
/** A cached leaf is minted anew once it has less than this left. */
export const LEAF_RENEWAL_MS = DAY;
/** How far back a certificate's notBefore is set, for clients whose clocks run behind. */
const BACKDATE_MS = HOUR;

/** What signing a leaf needs: the CA's certificate, its private key and its key identifier. */
export interface CaSigner {
  readonly certificate: x509.X509Certificate;
  readonly privateKey: CryptoKey;
  /** The CA's subject key identifier, hex: every leaf's authority key identifier. */
  readonly keyId: string;
}

/** A certificate with its key, both PEM (the key PKCS#8), and when it ends. */
export interface MintedPair {
  certPem: string;
  keyPem: string;
  notAfter: Date;
}

/**
 * Makes a new CA for `hosts` (its only permitted names), valid from `now` for 10 years (or
 * `years`); its common name is `name` and a random id.
 */
export async function makeCa(
  hosts: readonly string[],
  now: Date,
  options: { name?: string; years?: number } = {},
): Promise<{ pair: MintedPair; signer: CaSigner }> {
  const keys = await crypto.subtle.generateKey(P256, true, ["sign", "verify"]);
  const id = hex(crypto.getRandomValues(new Uint8Array(4)));
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + (options.years ?? 10));
  const ski = await x509.SubjectKeyIdentifierExtension.create(keys.publicKey);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=${options.name ?? "gurt box CA"} ${id}`,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter,
    keys,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      ski,
      nameConstraints(hosts),
    ],
  });
  const keyPem = await privateKeyPem(keys.privateKey);
  return {
    pair: { certPem: certificate.toString("pem") + "\n", keyPem, notAfter },
    signer: { certificate, privateKey: keys.privateKey, keyId: ski.keyId },
  };
}

/** Mints a leaf for `host` signed by `signer`, valid from `now` - 1 h to `now` + 30 days. */
export async function mintLeaf(signer: CaSigner, host: string, now: Date): Promise<MintedPair> {
  const keys = await crypto.subtle.generateKey(P256, true, ["sign", "verify"]);
  // The public key exported once, as the library's PublicKey: given the CryptoKey, the key
  // identifier and the generator would each export it again (about 0.4 ms apiece here).
  const publicKey = new x509.PublicKey(await crypto.subtle.exportKey("spki", keys.publicKey));
  const notAfter = new Date(now.getTime() + LEAF_LIFETIME_MS);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: [{ CN: [host] }],
    issuer: signer.certificate.subjectName,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter,
    publicKey,
    signingKey: signer.privateKey,
    signingAlgorithm: SIGNING,
    extensions: [
      // An address (only the tests' minter asks for one) is an iPAddress SAN, as clients read it.
      new x509.SubjectAlternativeNameExtension([{
        type: isAddress(host) ? "ip" : "dns",
        value: host,
      }]),
      new x509.AuthorityKeyIdentifierExtension(signer.keyId),
      await x509.SubjectKeyIdentifierExtension.create(publicKey),
      new x509.BasicConstraintsExtension(false),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    ],
  });
  return {
    certPem: certificate.toString("pem") + "\n",
    keyPem: await privateKeyPem(keys.privateKey),
    notAfter,
  };
}

/** Parses a CA certificate PEM; throws the parser's error when it is not one. */
export function parseCertificate(pem: string): x509.X509Certificate {
  return new x509.X509Certificate(pem);
}

/** Imports a PKCS#8 PEM ECDSA P-256 private key for signing; throws when it is not one. */
export async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const blocks = x509.PemConverter.decodeWithHeaders(pem);
  if (blocks.length !== 1 || blocks[0].type !== "PRIVATE KEY") {
    throw new Error("it is not one PEM block of type PRIVATE KEY");
  }
  return await crypto.subtle.importKey("pkcs8", blocks[0].rawData, P256, false, ["sign"]);
}

/** Whether `privateKey` is the key of `certificate`'s public key (a signature it verifies). */
export async function keyMatches(
  privateKey: CryptoKey,
  certificate: x509.X509Certificate,
): Promise<boolean> {
  const probe = crypto.getRandomValues(new Uint8Array(32));
  const signature = await crypto.subtle.sign(SIGNING, privateKey, probe);
  const publicKey = await certificate.publicKey.export(P256, ["verify"]);
  return await crypto.subtle.verify(SIGNING, publicKey, signature, probe);
}

/**
 * A certificate's name constraints: the dNSNames they permit and the iPAddress ranges they
 * exclude (`0.0.0.0/0`, `::/0`), a name of another kind shown as such; null without the extension.
 */
export function nameConstraintsOf(
  certificate: x509.X509Certificate,
): { permitted: string[]; excluded: string[] } | null {
  const extension = certificate.getExtension(id_ce_nameConstraints);
  if (extension === null) return null;
  const constraints = AsnConvert.parse(extension.value, NameConstraints);
  return {
    permitted: Array.from(
      constraints.permittedSubtrees ?? [],
      (subtree) => subtree.base.dNSName ?? "(a name that is not a DNS name)",
    ),
    excluded: Array.from(
      constraints.excludedSubtrees ?? [],
      (subtree) => subtree.base.iPAddress ?? "(a name that is not an IP range)",
    ),
  };
}

/**
 * The iPAddress ranges the CA's name constraints exclude: every IPv4 and IPv6 address, so the CA
 * cannot vouch for a certificate whose names include an IP address (a second lock beside the
 * permitted dNSNames, which say nothing of IP addresses).
 */
export const EXCLUDED_IP_RANGES: readonly string[] = ["0.0.0.0/0", "::/0"];

/** The CA's subject key identifier, hex, or null without one. */
export function subjectKeyId(certificate: x509.X509Certificate): string | null {
  const extension = certificate.getExtension(x509.SubjectKeyIdentifierExtension);
  return extension === null ? null : extension.keyId;
}

/**
 * The critical name constraints extension permitting exactly the dNSNames `hosts` and excluding
 * every IP address.
 */
function nameConstraints(hosts: readonly string[]): x509.Extension {
  const permitted = new GeneralSubtrees(
    hosts.map((host) => new GeneralSubtree({ base: new GeneralName({ dNSName: host }) })),
  );
  const excluded = new GeneralSubtrees(
    EXCLUDED_IP_RANGES.map((range) =>
      new GeneralSubtree({ base: new GeneralName({ iPAddress: range }) })
    ),
  );
  const value = AsnConvert.serialize(
    new NameConstraints({ permittedSubtrees: permitted, excludedSubtrees: excluded }),
  );
  return new x509.Extension(id_ce_nameConstraints, true, value);
}

/** Whether `host` is an IPv4 or IPv6 literal rather than a name. */
function isAddress(host: string): boolean {
  return /^[0-9.]+$/.test(host) || host.includes(":");
}

/** A positive serial of exactly 16 random bytes, hex (first byte 0x01–0x7f). */
function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] & 0x7f) || 0x01;
  return hex(bytes);
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await crypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY") + "\n";
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
