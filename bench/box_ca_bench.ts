/**
 * The box CA's leaves (issue 19): leaf() cold (a mint: a fresh P-256 key, a certificate signed by
 * the CA, the key exported as PKCS#8 PEM) and cached, each beside the floor measured in the same
 * run: a bare WebCrypto ECDSA P-256 generateKey and one sign, which any mint must do. Goals: cold
 * ≤ 10 ms, cached ≤ 0.01 ms. The cache is cleared for each cold call by moving the CA's clock 30
 * days on, past the leaf's renewal, so the figure is leaf()'s own path (no file is touched).
 */
import { openBoxCa } from "../mod/box-ca/mod.ts";
import { p50 } from "./measure.ts";
import { type BenchRow, printTable } from "./table.ts";

const COLD = 200;
const WARM = 20;
const CACHED_BATCH = 10_000;
const CACHED_BATCHES = 50;
const HOST = "api.anthropic.com";
const DAY = 24 * 3_600_000;

/** One bare key generation and signature: the floor of minting a leaf. */
async function bareKeyAndSign(): Promise<void> {
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    keys.privateKey,
    new Uint8Array(512),
  );
}

/** Milliseconds per call of `op`, one sample per call. */
async function samples(op: () => Promise<unknown>, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await op();
    times.push(performance.now() - start);
  }
  return times;
}

/** Milliseconds per call of `op`, each sample the mean of a batch of CACHED_BATCH calls. */
async function batchSamples(op: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < CACHED_BATCH; i++) await op();
  const times: number[] = [];
  for (let b = 0; b < CACHED_BATCHES; b++) {
    const start = performance.now();
    for (let i = 0; i < CACHED_BATCH; i++) await op();
    times.push((performance.now() - start) / CACHED_BATCH);
  }
  return times;
}

const home = await Deno.makeTempDir({ prefix: "gurt-box-ca-bench-" });
try {
  let now = Date.now();
  const ca = await openBoxCa(`${home}/ca`, { clock: () => new Date(now) });
  const mint = () => {
    now += 30 * DAY;
    return ca.leaf(HOST);
  };
  await samples(mint, WARM);
  await samples(bareKeyAndSign, WARM);
  // Cold and floor interleaved in turns of 10, so load from elsewhere weighs on both alike.
  const cold: number[] = [];
  const floor: number[] = [];
  for (let turn = 0; turn < COLD / 10; turn++) {
    cold.push(...await samples(mint, 10));
    floor.push(...await samples(bareKeyAndSign, 10));
  }
  const cached = await batchSamples(() => ca.leaf(HOST));
  const coldMs = p50(cold);
  const floorMs = p50(floor);
  const cachedMs = p50(cached);
  const rows: BenchRow[] = [
    {
      what: `leaf() cold (mint: P-256 key, signed certificate, PKCS#8 PEM), p50 of ${cold.length}`,
      unit: "ms",
      value: coldMs,
      baselineWhat: "bare WebCrypto P-256 generateKey + one sign, same run",
      baseline: floorMs,
      target: "(report)",
    },
    {
      what: "leaf() cold, p50",
      unit: "ms",
      value: coldMs,
      baselineWhat: "the 10 ms goal",
      baseline: 10,
      target: "<= 1",
    },
    {
      what: `leaf() cached, p50 of ${CACHED_BATCHES} batches of ${CACHED_BATCH}`,
      unit: "ms",
      value: cachedMs,
      baselineWhat: "bare WebCrypto P-256 generateKey + one sign, same run",
      baseline: floorMs,
      target: "(report)",
    },
    {
      what: "leaf() cached, p50",
      unit: "ms",
      value: cachedMs,
      baselineWhat: "the 0.01 ms goal",
      baseline: 0.01,
      target: "<= 1",
    },
  ];
  printTable(rows);
} finally {
  await Deno.remove(home, { recursive: true });
}
