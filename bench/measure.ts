/** Shared measuring for the benchmarks: a rate over a time window, the median of samples, the fsync floor. */
import { realFileOps } from "../mod/audit/mod.ts";

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

/**
 * Appending a short line and fdatasync, `rounds` times, in the same file system as the home, with
 * the audit writer's own write and sync (the journal's are the same): the write in place, the
 * fdatasync awaited. (An awaited write as well would cost a trip through Deno's blocking pool that
 * no write of the path makes, and raise the floor.)
 */
export async function fsyncTimes(dir: string, rounds: number): Promise<number[]> {
  const file = await Deno.open(`${dir}/floor.jsonl`, { append: true, create: true });
  const line = new TextEncoder().encode(`${JSON.stringify({ seq: 1, hash: "0".repeat(64) })}\n`);
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await realFileOps.write(file, line);
    await realFileOps.syncData(file);
    times.push(performance.now() - started);
  }
  file.close();
  return times;
}
