/** SHA-256 of a line, with node:crypto (Web Crypto is about 20 times slower per line here). */
import { createHash } from "node:crypto";

/** The SHA-256 of the bytes, as 64 lowercase hex digits. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
