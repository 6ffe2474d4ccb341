/** Money as people read it, one way for every sentence gurt writes (the CLI, the portal, asks). */

/**
 * Cents as dollars and cents, `$19.99` for 1999; a fraction of a cent (a model's exact spend) to a
 * hundredth of a cent, `$0.0060` for 0.6.
 */
export function centsText(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const whole = Number.isInteger(cents);
  const dollars = Math.abs(cents) / 100;
  return `${sign}$${whole ? dollars.toFixed(2) : dollars.toFixed(4)}`;
}
