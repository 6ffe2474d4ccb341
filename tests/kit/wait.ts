/** Waiting in tests: on the thing itself, polled, with a deadline that names what never came. */

/** How long to wait and how often to look. */
export interface WaitOptions {
  /** Fail after this many milliseconds (default 5000). */
  ms?: number;
  /** Look again after this many milliseconds (default 5). */
  every?: number;
  /** What is awaited, for the failure. */
  what?: string;
}

/** Polls `check` until it gives a value (not null, undefined or false); fails after `ms`. */
export async function waitFor<T>(
  check: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  options: WaitOptions & { seen?: () => string } = {},
): Promise<T> {
  const { ms = 5000, every = 5, what = "the condition" } = options;
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      const seen = options.seen === undefined ? "" : `; last seen:\n${options.seen()}`;
      throw new Error(`gave up waiting for ${what} after ${ms} ms${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}

/** Waits until `check` is true, polling the thing itself; fails after `ms` (a number: the ms). */
export async function until(
  check: () => boolean | Promise<boolean>,
  options: number | WaitOptions = {},
): Promise<void> {
  await waitFor(check, typeof options === "number" ? { ms: options } : options);
}
