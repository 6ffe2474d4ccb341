/** JSON with object keys sorted, so the same input always gives the same text, and its digest. */
import { createHash } from "node:crypto";

/** Serialises `value` with every object's keys in sorted order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/**
 * The SHA-256 (hex) of `value`'s canonical JSON: what the journal keeps of a call's input, so a key
 * reused for another input is known after a restart without the input itself being compared.
 */
export function inputDigest(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value) ?? "null").digest("hex");
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}
