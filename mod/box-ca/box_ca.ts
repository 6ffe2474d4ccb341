/**
 * The box CA as the core holds it: opened (made on the first start) from the box home's `ca/`,
 * the bundle that tasks trust rewritten at each open, and a leaf per intercepted host minted on
 * first use and kept in memory until a day before its end.
 */
import { writeFileAtomic } from "../common/mod.ts";
import { BoxCaError } from "./box_ca_error.ts";
import { ensureCaDir, readCaFile } from "./ca_files.ts";
import {
  type CaSigner,
  EXCLUDED_IP_RANGES,
  importPrivateKey,
  keyMatches,
  LEAF_RENEWAL_MS,
  makeCa,
  type MintedPair,
  mintLeaf,
  nameConstraintsOf,
  parseCertificate,
  subjectKeyId,
} from "./certificates.ts";
import { INTERCEPTED_HOSTS, isInterceptedHost } from "./intercepted_hosts.ts";

/** The file the machine keeps its trusted roots in (Debian's ca-certificates). */
export const SYSTEM_ROOTS = "/etc/ssl/certs/ca-certificates.crt";

/** A leaf certificate (the chain is the leaf alone) and its key, PKCS#8; both PEM. */
export interface Leaf {
  readonly certPem: string;
  readonly keyPem: string;
}

/** The box's certificate authority. */
export interface BoxCa {
  readonly caPem: string;
  /** Path of the bundle file: the box CA then the system roots (/etc/ssl/certs/ca-certificates.crt). */
  readonly bundlePath: string;
  /** The leaf for one of INTERCEPTED_HOSTS, minted on first use and cached in memory; throws for any other name. */
  leaf(host: string): Promise<Leaf>;
  /**
   * The text of a bundle with `extra` (a task's own CA, PEM) between the box CA and the system
   * roots: what a task with credentials trusts (mod/box-ca's TaskCa).
   */
  bundleWith(extra: string): string;
}

/** Options of openBoxCa: the system roots file to bundle, and the clock (tests move it). */
export interface OpenBoxCaOptions {
  systemRoots?: string;
  clock?: () => Date;
}

/** Each open CA's signer, for the test-only minter (mint_any.ts); nothing else reads it. */
const signers = new WeakMap<BoxCa, CaSigner>();

/** Opens the box CA in `dir` (the box home's `ca/`), making it on the first start. */
export async function openBoxCa(dir: string, options: OpenBoxCaOptions = {}): Promise<BoxCa> {
  const clock = options.clock ?? (() => new Date());
  const systemRoots = options.systemRoots ?? SYSTEM_ROOTS;
  await ensureCaDir(dir);
  const keyPath = `${dir}/ca.key`;
  const certPath = `${dir}/ca.pem`;
  const keyPem = await readCaFile(keyPath, "key");
  const certPem = await readCaFile(certPath, "certificate");
  let opened: { caPem: string; signer: CaSigner };
  if (certPem === null) {
    // No certificate: nothing can trust this CA yet, so a key left alone (a first start cut
    // short between the two writes) is replaced too. The key goes first, so a certificate on disk
    // always has its key.
    const made = await makeCa(Object.keys(INTERCEPTED_HOSTS), clock());
    await writeFileAtomic(keyPath, made.pair.keyPem, { mode: 0o600 });
    await writeFileAtomic(certPath, made.pair.certPem, { mode: 0o644 });
    opened = { caPem: made.pair.certPem, signer: made.signer };
  } else if (keyPem === null) {
    throw new BoxCaError(
      `the box CA certificate ${certPath} exists but its key ${keyPath} does not; gurt does not ` +
        `replace a CA that tasks may trust by itself: to make a new one, stop gurt and delete ` +
        `${dir}; see runbook.md#box-ca`,
    );
  } else {
    opened = { caPem: certPem, signer: await loadSigner(certPem, keyPem, { certPath, keyPath }) };
    checkStillValid(opened.signer, certPath, clock());
  }
  const bundlePath = `${dir}/bundle.pem`;
  const roots = await readRoots(systemRoots);
  await writeFileAtomic(bundlePath, opened.caPem + roots, { mode: 0o644 });
  const ca = new BoxLeaves(opened.caPem, bundlePath, { signer: opened.signer, clock, roots });
  signers.set(ca, opened.signer);
  return ca;
}

/** The signer of an open CA (for mint_any.ts, the tests' minter of leaves for any name). */
export function signerOf(ca: BoxCa): CaSigner {
  const signer = signers.get(ca);
  if (signer === undefined) throw new Error("this BoxCa was not opened by openBoxCa");
  return signer;
}

/** A leaf minted and when it stops being served from the cache. */
interface Cached {
  leaf: Leaf;
  renewAt: number;
}

/** The open CA: its PEM, its bundle, and the leaves minted so far, one per host. */
class BoxLeaves implements BoxCa {
  readonly #leaves: LeafCache;
  readonly #roots: string;

  constructor(
    readonly caPem: string,
    readonly bundlePath: string,
    options: { signer: CaSigner; clock: () => Date; roots: string },
  ) {
    this.#leaves = new LeafCache(options.signer, options.clock);
    this.#roots = options.roots;
  }

  leaf(host: string): Promise<Leaf> {
    if (!isInterceptedHost(host)) {
      return Promise.reject(
        new BoxCaError(
          `${JSON.stringify(host)} is not one of the hosts the box intercepts ` +
            `(${Object.keys(INTERCEPTED_HOSTS).join(", ")}); the box CA signs no other name; ` +
            `see runbook.md#box-ca`,
        ),
      );
    }
    return this.#leaves.leaf(host);
  }

  bundleWith(extra: string): string {
    return this.caPem + (extra.endsWith("\n") ? extra : `${extra}\n`) + this.#roots;
  }
}

/**
 * The leaves one CA minted, one per host, each kept until a day before its end; concurrent
 * callers for one host share one minting. Which hosts it may be asked for is its owner's check.
 */
export class LeafCache {
  readonly #signer: CaSigner;
  readonly #clock: () => Date;
  readonly #ready = new Map<string, Cached>();
  readonly #minting = new Map<string, Promise<Cached>>();

  constructor(signer: CaSigner, clock: () => Date) {
    this.#signer = signer;
    this.#clock = clock;
  }

  /** The host's leaf, minted if there is none still good. */
  leaf(host: string): Promise<Leaf> {
    const cached = this.#ready.get(host);
    if (cached !== undefined && this.#clock().getTime() < cached.renewAt) {
      return Promise.resolve(cached.leaf);
    }
    let minting = this.#minting.get(host);
    if (minting === undefined) {
      minting = this.#mint(host);
      this.#minting.set(host, minting);
    }
    return minting.then((entry) => entry.leaf);
  }

  async #mint(host: string): Promise<Cached> {
    try {
      const pair: MintedPair = await mintLeaf(this.#signer, host, this.#clock());
      const entry: Cached = {
        leaf: Object.freeze({ certPem: pair.certPem, keyPem: pair.keyPem }),
        renewAt: pair.notAfter.getTime() - LEAF_RENEWAL_MS,
      };
      this.#ready.set(host, entry);
      return entry;
    } finally {
      this.#minting.delete(host);
    }
  }
}

/** The CA's certificate and key as read, checked to be one CA of the kind gurt makes. */
async function loadSigner(
  certPem: string,
  keyPem: string,
  paths: { certPath: string; keyPath: string },
): Promise<CaSigner> {
  const { certPath, keyPath } = paths;
  const fix = `if it was damaged, stop gurt and delete ${
    certPath.slice(0, certPath.lastIndexOf("/"))
  } to make a new CA; see runbook.md#box-ca`;
  let certificate;
  try {
    certificate = parseCertificate(certPem);
  } catch (error) {
    throw new BoxCaError(
      `the box CA certificate ${certPath} cannot be read as a PEM certificate ` +
        `(${message(error)}); ${fix}`,
    );
  }
  let privateKey: CryptoKey;
  try {
    privateKey = await importPrivateKey(keyPem);
  } catch (error) {
    throw new BoxCaError(
      `the box CA key ${keyPath} cannot be read as a PKCS#8 ECDSA P-256 key (${message(error)}); ` +
        fix,
    );
  }
  let matches = false;
  try {
    matches = await keyMatches(privateKey, certificate);
  } catch {
    matches = false;
  }
  if (!matches) {
    throw new BoxCaError(`the box CA key ${keyPath} is not the key of ${certPath}; ${fix}`);
  }
  const keyId = subjectKeyId(certificate);
  const constraints = nameConstraintsOf(certificate);
  const hosts = Object.keys(INTERCEPTED_HOSTS);
  const permitted = constraints?.permitted ?? null;
  // A CA made before the IP exclusions were added excludes nothing: it is kept as it is, since
  // tasks trust it (runbook.md#box-ca says how to make a new one that has them).
  const excluded = constraints?.excluded ?? [];
  const excludedOk = excluded.length === 0 ||
    [...excluded].sort().join(" ") === [...EXCLUDED_IP_RANGES].sort().join(" ");
  if (
    keyId === null || permitted === null || !excludedOk ||
    [...permitted].sort().join(" ") !== [...hosts].sort().join(" ")
  ) {
    throw new BoxCaError(
      `the box CA certificate ${certPath} is not one this gurt makes: it must carry a subject key ` +
        `identifier, permit exactly ${hosts.join(", ")} (it permits ${
          permitted === null ? "any name" : permitted.join(", ") || "no name"
        }) and exclude no name but the IP ranges ${EXCLUDED_IP_RANGES.join(" and ")} (it ` +
        `excludes ${excluded.join(", ") || "none"}); stop gurt and delete ${
          certPath.slice(0, certPath.lastIndexOf("/"))
        } to make a new CA; see runbook.md#box-ca`,
    );
  }
  return { certificate, privateKey, keyId };
}

function checkStillValid(signer: CaSigner, certPath: string, now: Date): void {
  const { notAfter } = signer.certificate;
  if (now.getTime() > notAfter.getTime() - 30 * 24 * 3_600_000) {
    throw new BoxCaError(
      `the box CA certificate ${certPath} ends on ${notAfter.toISOString()}, too soon to sign ` +
        `30-day leaves; stop gurt and delete ${
          certPath.slice(0, certPath.lastIndexOf("/"))
        } to make a new CA; see runbook.md#box-ca`,
    );
  }
}

async function readRoots(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    throw new BoxCaError(
      `the system roots ${path} cannot be read (${message(error)}); install the ca-certificates ` +
        `package, whose roots tasks trust beside the box CA; see runbook.md#box-ca`,
    );
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
