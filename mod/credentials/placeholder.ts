/**
 * The placeholder a task holds in place of a credential (docs/credentials.md#what-a-task-sees):
 * `gurt-credential-<rule id>-<32 lowercase hex>`, fresh for each task. It holds only a-z, 0-9 and
 * -, so URL encoding leaves it as it is and base64 carries it whole; its prefix is gurt's, so it is
 * never a real token.
 */

/** The prefix every placeholder starts with. */
export const PLACEHOLDER_PREFIX = "gurt-credential-";

const PLACEHOLDER = /^gurt-credential-([a-z0-9-]{1,64})-([0-9a-f]{32})$/;

/** A fresh random placeholder for the rule `ruleId` (128 bits from the system's random source). */
export function newPlaceholder(ruleId: string): string {
  if (!/^[a-z0-9-]{1,64}$/.test(ruleId)) {
    throw new Error(`${JSON.stringify(ruleId.slice(0, 64))} is not a credential rule id`);
  }
  const random = crypto.getRandomValues(new Uint8Array(16));
  const hex = [...random].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${PLACEHOLDER_PREFIX}${ruleId}-${hex}`;
}

/** Whether `text` has a placeholder's form for the rule `ruleId`. */
export function isPlaceholder(text: string, ruleId: string): boolean {
  const match = PLACEHOLDER.exec(text);
  return match !== null && match[1] === ruleId;
}
