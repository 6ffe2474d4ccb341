/**
 * The vault's cost (issue 6). Redaction: a 16 KB tool result through the backstop with 10 vault keys
 * (each in all its forms: raw, JSON, hex, base64 at three alignments, URL), against the least any
 * check must do, one `includes` per raw value, in the same run. Streaming: the same text in 512 B
 * chunks against redacting it whole. The call path: /call answers per second with 10 keys in the
 * vault against an empty vault. Setting a key: PUT /api/vault (audit record, checked re-read,
 * atomic rewrite with fsync) against a bare atomic write of the same bytes.
 */
import { loadConfig } from "../mod/config/mod.ts";
import { Core } from "../mod/core/core.ts";
import { adminSocketPath } from "../mod/config/mod.ts";
import { requestJson } from "../mod/net/mod.ts";
import { Redactor, StreamRedactor, writeVaultFile } from "../mod/vault/mod.ts";
import { type BenchRow, printTable } from "./table.ts";
import { rate as rateOf } from "./measure.ts";

const KEYS: [string, string][] = Array.from({ length: 10 }, (_, i) => [
  `SERVICE_${i}_API_KEY`,
  `sk-live-${i}-${crypto.randomUUID()}`,
]);

function resultText(): string {
  const words = ["ok", "status", "amount", "currency", "customer", "id", "created", "{", "}", ":"];
  let text = "";
  for (let i = 0; text.length < 16 * 1024; i++) text += words[(i * 7) % words.length] + " ";
  return text;
}

async function startCore(keys: [string, string][]): Promise<{ core: Core; home: string }> {
  const home = await Deno.makeTempDir({ prefix: "gurt-vault-bench-" });
  const vault = `${home}/vault.env`;
  await Deno.writeTextFile(vault, keys.map(([n, v]) => `${n}=${v}\n`).join(""), { mode: 0o600 });
  await Deno.mkdir(`${home}/grants`);
  await Deno.writeTextFile(
    `${home}/grants/echo.toml`,
    'tool = "example.echo"\nmode = "auto"\nmax_taint = "secret"\nresult_class = "private"\n',
  );
  const config = loadConfig({ home, env: { BOX_VAULT: vault }, root: false });
  const core = await Core.start(config, { log: () => {}, asRoot: false });
  return { core, home };
}

/** A core with a task whose socket answers example.echo; `stop` removes everything. */
async function echoTask(
  keys: [string, string][],
): Promise<{ call(): Promise<unknown>; stop(): Promise<void> }> {
  const { core, home } = await startCore(keys);
  const admin = adminSocketPath(home);
  const started = await requestJson(admin, {
    method: "POST",
    path: "/tasks",
    body: { worker: { kind: "none" }, tools: ["example.echo"] },
  });
  const id = (started.body as { task: { id: string } }).task.id;
  const socket = `${home}/tasks/${id}/broker.sock`;
  const text = resultText().slice(0, 2048);
  let n = 0;
  return {
    call: () =>
      requestJson(socket, {
        method: "POST",
        path: "/call",
        body: { tool: "example.echo", input: { text }, key: `k${n++}` },
      }),
    stop: async () => {
      await core.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

/**
 * Calls per second with and without vault keys, measured in alternating batches of 10 over the
 * same seconds, so that the disk's fsync times (shared with other work) weigh on both alike.
 */
async function callRates(): Promise<{ withKeys: number; withoutKeys: number }> {
  const keyed = await echoTask(KEYS);
  const empty = await echoTask([]);
  try {
    for (let i = 0; i < 20; i++) await Promise.all([keyed.call(), empty.call()]);
    const spent = { keyed: 0, empty: 0 };
    let batches = 0;
    const end = performance.now() + 3000;
    while (performance.now() < end) {
      for (const [which, task] of [["keyed", keyed], ["empty", empty]] as const) {
        const start = performance.now();
        for (let i = 0; i < 10; i++) await task.call();
        spent[which] += performance.now() - start;
      }
      batches++;
    }
    return {
      withKeys: (batches * 10) / (spent.keyed / 1000),
      withoutKeys: (batches * 10) / (spent.empty / 1000),
    };
  } finally {
    await keyed.stop();
    await empty.stop();
  }
}

async function putRate(): Promise<{ put: number; bare: number }> {
  const { core, home } = await startCore(KEYS);
  try {
    const admin = adminSocketPath(home);
    let n = 0;
    const put = await rate(() =>
      requestJson(admin, {
        method: "PUT",
        path: "/api/vault/BENCH_TOKEN",
        body: { value: `bench-token-value-${n++}` },
      })
    );
    const text = await Deno.readTextFile(`${home}/vault.env`);
    const bare = await rate(() => writeVaultFile(`${home}/bare.env`, text));
    return { put, bare };
  } finally {
    await core.close();
    await Deno.remove(home, { recursive: true });
  }
}

const text = resultText();
const mb = text.length / 1e6;
const redactor = Redactor.forEntries(KEYS);
const values = KEYS.map(([, value]) => value);
const redactRate = await rate(() => redactor.redact(text));
const includesRate = await rate(() => values.some((value) => text.includes(value)));
const streamRate = await rate(() => {
  const stream = new StreamRedactor(redactor);
  let out = "";
  for (let i = 0; i < text.length; i += 512) out += stream.push(text.slice(i, i + 512));
  return out + stream.flush();
});
const { withKeys, withoutKeys } = await callRates();
const { put, bare } = await putRate();

const rows: BenchRow[] = [
  {
    what: "redact 16 KB, 10 keys in all forms",
    unit: "MB/s",
    value: redactRate * mb,
    baselineWhat: "includes() of the 10 raw values",
    baseline: includesRate * mb,
    target: ">= 0.1",
  },
  {
    what: "stream-redact 16 KB in 512 B chunks",
    unit: "MB/s",
    value: streamRate * mb,
    baselineWhat: "redact the 16 KB whole",
    baseline: redactRate * mb,
    target: ">= 0.5",
  },
  {
    what: "/call example.echo 2 KB, 10 vault keys",
    unit: "calls/s",
    value: withKeys,
    baselineWhat: "the same with an empty vault",
    baseline: withoutKeys,
    target: ">= 0.8",
  },
  {
    what: "PUT /api/vault (audit + atomic rewrite)",
    unit: "sets/s",
    value: put,
    baselineWhat: "bare atomic write of the file",
    baseline: bare,
    target: ">= 0.3",
  },
];
printTable(rows);

/** Operations per second of `op` over about `ms` after a short warm-up. */
function rate(op: () => Promise<unknown> | unknown, ms = 1000): Promise<number> {
  return rateOf(op, { ms, warmMs: 150 });
}
