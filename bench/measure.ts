/** Shared measuring for the benchmarks: a rate over a time window, and the median of samples. */

/**
 * Runs `op` for about `ms` milliseconds after a warm-up of `warmMs`, checking the clock every
 * `batch` operations, and returns operations per second.
 */
export async function rate(
  op: () => Promise<unknown> | unknown,
  options: { ms?: number; warmMs?: number; batch?: number } = {},
): Promise<number> {
  const { ms = 1500, warmMs = 200, batch = 5 } = options;
  const warm = performance.now() + warmMs;
  while (performance.now() < warm) await op();
  let count = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < batch; i++) await op();
    count += batch;
    now = performance.now();
  }
  return count / ((now - start) / 1000);
}

/** The median (p50) of a set of samples. */
export function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
