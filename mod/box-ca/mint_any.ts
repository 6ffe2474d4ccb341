/**
 * For tests only: a leaf for ANY name from an open box CA, bypassing the intercepted-host check,
 * to show that clients refuse it on the CA's name constraints. Not exported from mod.ts; nothing
 * in mod/ imports it.
 */
import { type BoxCa, type Leaf, signerOf } from "./box_ca.ts";
import { mintLeaf } from "./certificates.ts";

/** Mints a leaf for `host`, whatever it is, signed by `ca`; never cached. */
export async function mintLeafForAnyName(ca: BoxCa, host: string): Promise<Leaf> {
  const pair = await mintLeaf(signerOf(ca), host, new Date());
  return { certPem: pair.certPem, keyPem: pair.keyPem };
}
