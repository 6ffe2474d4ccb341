/**
 * The owner's credential for the portal: a random token in `<home>/portal/owner.token` (0600),
 * written on the first start. `gurt portal` turns it into a one-time login code (an HMAC of a
 * nonce and the time), so the token itself never travels in a link.
 */
import { Buffer } from "node:buffer";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { ownerTokenPath, portalDir } from "../config/mod.ts";

const TOKEN = /^[0-9a-f]{64}$/;

/**
 * Reads the owner token, writing a new one (0600) first if there is none. The new token is written
 * whole to a file of its own and then linked into place, which fails if a token is there already:
 * two starts at once (the core's and a portal's) both read the one that won, never a file half
 * written.
 */
export async function ensureOwnerToken(home: string): Promise<string> {
  await Deno.mkdir(portalDir(home), { recursive: true, mode: 0o700 });
  await Deno.chmod(portalDir(home), 0o700);
  const path = ownerTokenPath(home);
  const exists = await Deno.lstat(path).then(() => true, (error) => {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  });
  if (!exists) {
    const draft = `${path}.${randomBytes(8).toString("hex")}.new`;
    const file = await Deno.open(draft, { write: true, createNew: true, mode: 0o600 });
    try {
      await file.write(new TextEncoder().encode(randomBytes(32).toString("hex") + "\n"));
      await file.syncData();
    } finally {
      file.close();
    }
    try {
      await Deno.link(draft, path);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    } finally {
      await Deno.remove(draft).catch(() => {});
    }
  }
  return await readOwnerToken(home);
}

/** Reads the owner token; refuses one that others can read or that is not a token. */
export async function readOwnerToken(home: string): Promise<string> {
  const path = ownerTokenPath(home);
  const info = await Deno.stat(path);
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    throw new Error(
      `${path} can be read by others (mode ${(info.mode & 0o777).toString(8)}); ` +
        `remove it and restart gurt serve to get a new one; see runbook.md#portal-token-exposed`,
    );
  }
  const token = (await Deno.readTextFile(path)).trim();
  if (!TOKEN.test(token)) {
    throw new Error(
      `${path} does not hold an owner token (64 hex digits); remove it and restart gurt serve ` +
        `to get a new one; see runbook.md#portal-token-exposed`,
    );
  }
  return token;
}

/** Makes a one-time login code for `token` at `now`: `<ms>.<nonce>.<mac>`. */
export function loginCode(token: string, now: Date): string {
  const head = `${now.getTime()}.${randomBytes(16).toString("hex")}`;
  return `${head}.${mac(token, head)}`;
}

/** What a login code says once its MAC is checked; null if it is not one of this token's codes. */
export function openLoginCode(
  token: string,
  code: string,
): { issued: number; nonce: string } | null {
  const match = /^(\d{1,16})\.([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(code);
  if (match === null) return null;
  const expected = Buffer.from(mac(token, `${match[1]}.${match[2]}`), "hex");
  if (!timingSafeEqual(expected, Buffer.from(match[3], "hex"))) return null;
  return { issued: Number(match[1]), nonce: match[2] };
}

/** Compares two secrets in constant time. */
export function sameSecret(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function mac(token: string, text: string): string {
  return createHmac("sha256", token).update(`gurt-portal-login:${text}`).digest("hex");
}
