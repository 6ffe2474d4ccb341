/**
 * A write the disk had no room for (ENOSPC, or EDQUOT past a quota): the box home's disk is full.
 * It is not a bug of gurt's, so it is refused in words that say so and point at the runbook, never
 * answered "failed inside gurt".
 */

/** Whether `error` is a write refused for want of space. */
export function isDiskFull(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === "ENOSPC" || code === "EDQUOT" ||
    /No space left on device|quota exceeded/i.test(error.message);
}

/** The sentence for a write that `what` needed and a full disk refused. */
export function diskFullText(what: string, error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  return `${what}: the box home's disk is full (${detail}); free space on it; see runbook.md#disk-full`;
}
