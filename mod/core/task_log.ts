/**
 * The lines a task causes in `gurt serve`'s log, each task held to a few: a refused path, a failed
 * request, a refusal of its doors. A task that floods (thousands of refusals a second) would
 * otherwise fill the owner's log and disk. Past `lines` in a window of `windowMs`, a task's lines
 * are dropped and counted, and the count is logged with the next line let through, or when the
 * task ends; a line is cut at 1000 characters, after the vault's values in it are redacted (a cut
 * first would leave the start of a value the redactor then no longer knows). What the lines quote
 * of the task is escaped by the core's log itself (core.ts).
 */

/** A task's log: `log` as BrokerDeps has it, and `close`, which reports what was dropped. */
export interface TaskLog {
  log(line: string): void;
  /** Logs the count of lines dropped since the last report, if any. */
  close(): void;
}

/** How many lines a task may log per window, the window, and the longest line kept whole. */
export const TASK_LOG_LIMIT = { lines: 20, windowMs: 10_000, lineChars: 1000 };

/** The log of task `task`: lines go to the core's `log`, redacted, up to the limit; the rest are counted. */
export function taskLog(
  core: {
    log: (line: string) => void;
    clock: () => Date;
    /** Replaces the vault's values, before a line is cut. */
    redact: (text: string) => string;
  },
  options: { task: string; lines?: number; windowMs?: number },
): TaskLog {
  const log = core.log;
  const lines = options.lines ?? TASK_LOG_LIMIT.lines;
  const windowMs = options.windowMs ?? TASK_LOG_LIMIT.windowMs;
  let windowStart = Number.NEGATIVE_INFINITY;
  let used = 0;
  let dropped = 0;
  const report = (): void => {
    if (dropped === 0) return;
    log(
      `gurt: task ${options.task}: ${dropped} more lines of this task were not logged (at most ` +
        `${lines} every ${windowMs / 1000} s); see runbook.md#task-log-limit`,
    );
    dropped = 0;
  };
  return {
    log(said: string): void {
      const now = core.clock().getTime();
      if (now - windowStart >= windowMs) {
        windowStart = now;
        used = 0;
        report();
      }
      if (used >= lines) {
        dropped++;
        return;
      }
      used++;
      const line = core.redact(said);
      const over = line.length - TASK_LOG_LIMIT.lineChars;
      log(
        over > 0 ? `${line.slice(0, TASK_LOG_LIMIT.lineChars)}… (${over} more characters)` : line,
      );
    },
    close: report,
  };
}

/**
 * The core's log for the box's own notices (BrokerDeps.boxLog): what every task's calls meet alike
 * (the audit log cannot be written) is said once, not once a call, so no task can flood the log
 * with it, and none can hide it by using up its own lines. A line the same as the last is dropped.
 */
export function boxNotices(log: (line: string) => void): (line: string) => void {
  let last: string | null = null;
  return (line: string): void => {
    if (line === last) return;
    last = line;
    log(line);
  };
}
