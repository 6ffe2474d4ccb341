/**
 * Credentials on a task's own HTTPS (issue 32), beside today's plain tunnel in the same run: the
 * p50 time of one small `GET /api/x` on a kept-alive connection through a task's egress proxy, (a)
 * through a plain tunnel to an origin on the task's host list, with the real token (the floor: the
 * proxy only pipes TLS), and (b) to an origin of a credential rule, with the placeholder: the
 * core answers TLS with the task's CA, decides the request as an `auto` http.request call (Decision
 * and Result records, fsynced), puts the token in and sends it by its credential dialer. Goal: (b)
 * adds at most 2 ms. And a 64 MB download each way: (b) at least 0.5x (a). The client is this
 * process (Deno's fetch through a loopback relay to the task's egress socket), as a task's
 * program would be behind its loopback door; the origins are real TLS servers on loopback.
 */
import { type BenchRow, printTable } from "./table.ts";
import { p50 } from "./measure.ts";
import { grant, startBox } from "../tests/kit/mod.ts";
import { type HttpsOrigin, startHttpsOrigin } from "../tests/kit/https_origin.ts";
import { openLoopbackRelay } from "../mod/egress/mod.ts";

const REQUESTS = 300;
const DOWNLOAD = 64 * 1024 * 1024;
const ROUNDS = 3;
const TOKEN = `tok_bench${crypto.randomUUID().replaceAll("-", "")}`;
const PLAIN = "plain.gurt.test";
const CRED = "cred.gurt.test";

const origins: Record<string, HttpsOrigin> = {};
for (const host of [PLAIN, CRED]) origins[host] = await startHttpsOrigin({ host, token: TOKEN });
const plain = origins[PLAIN];
const cred = origins[CRED];
const home = await Deno.makeTempDir({ prefix: "gurt-cred-bench-" });
await Deno.writeTextFile(`${home}/vault.env`, `API_TOKEN=${TOKEN}\n`, { mode: 0o600 });
await Deno.mkdir(`${home}/credentials`);
await Deno.writeTextFile(
  `${home}/credentials/api.toml`,
  [
    `host = "${CRED}"`,
    `port = ${cred.port}`,
    `ca_file = "${cred.caFile}"`,
    'secret = "API_TOKEN"',
    'header = "Authorization: Bearer {}"',
  ].join("\n") + "\n",
);
const box = await startBox({
  home,
  grants: {
    api: grant({ tool: "http.request", hosts: [`${CRED}:${cred.port}`], methods: ["GET"] }),
  },
  toml: `[egress]\nresolve = { "${PLAIN}" = "127.0.0.1", "${CRED}" = "127.0.0.1" }\n` +
    `allow_private_hosts = ["${PLAIN}", "${CRED}"]\n`,
});
try {
  const started = await box.admin("POST", "/tasks", {
    worker: { kind: "none" },
    tools: [],
    budgetCents: null,
    hosts: [`${PLAIN}:${plain.port}`],
    credentials: ["api"],
  });
  if (started.status !== 200) throw new Error(JSON.stringify(started.body));
  const id = started.body.task.id as string;
  const dir = `${home}/tasks/${id}`;
  const record = JSON.parse(await Deno.readTextFile(`${dir}/task.json`));
  const placeholder = record.credentials[0].placeholder as string;
  const relay = await openLoopbackRelay(`${dir}/egress.sock`);
  const client = Deno.createHttpClient({
    proxy: { url: `http://127.0.0.1:${relay.port}` },
    caCerts: [await Deno.readTextFile(`${dir}/ca-bundle.pem`), plain.caPem],
  });
  const get = async (url: string, token: string) => {
    const answer = await fetch(url, { client, headers: { authorization: `Bearer ${token}` } });
    const bytes = (await answer.arrayBuffer()).byteLength;
    if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`);
    return bytes;
  };
  const plainUrl = `https://${PLAIN}:${plain.port}`;
  const credUrl = `https://${CRED}:${cred.port}`;
  const timed = async (op: () => Promise<unknown>) => {
    const start = performance.now();
    await op();
    return performance.now() - start;
  };
  for (let i = 0; i < 20; i++) {
    await get(`${plainUrl}/api/x`, TOKEN);
    await get(`${credUrl}/api/x`, placeholder);
  }
  // Interleaved in turns of 10, so load from elsewhere weighs on both alike.
  const floor: number[] = [];
  const credentialed: number[] = [];
  for (let turn = 0; turn < REQUESTS / 10; turn++) {
    for (let i = 0; i < 10; i++) floor.push(await timed(() => get(`${plainUrl}/api/x`, TOKEN)));
    for (let i = 0; i < 10; i++) {
      credentialed.push(await timed(() => get(`${credUrl}/api/x`, placeholder)));
    }
  }
  const mbps = async (url: string, token: string) => {
    const ms = await timed(async () => {
      const bytes = await get(`${url}/big?bytes=${DOWNLOAD}`, token);
      if (bytes !== DOWNLOAD) throw new Error(`${bytes} bytes of ${DOWNLOAD}`);
    });
    return DOWNLOAD / (1024 * 1024) / (ms / 1000);
  };
  const plainRates: number[] = [];
  const credRates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    plainRates.push(await mbps(plainUrl, TOKEN));
    credRates.push(await mbps(credUrl, placeholder));
  }
  const floorMs = p50(floor);
  const credMs = p50(credentialed);
  const rows: BenchRow[] = [
    {
      what:
        `credentialed auto GET (decided, recorded, token put in), p50 of ${credentialed.length}`,
      unit: "ms",
      value: credMs,
      baselineWhat: "the same GET through a plain tunnel, token in hand",
      baseline: floorMs,
      target: `<= ${((floorMs + 2) / floorMs).toFixed(2)}`,
    },
    {
      what: `${DOWNLOAD / 1024 / 1024} MB credentialed download, p50 of ${ROUNDS}`,
      unit: "MB/s",
      value: p50(credRates),
      baselineWhat: "the same download through a plain tunnel",
      baseline: p50(plainRates),
      target: ">= 0.5",
    },
  ];
  printTable(rows);
  console.log(
    `\nadded per credentialed request: ${(credMs - floorMs).toFixed(2)} ms (goal: at most 2 ms)`,
  );
  client.close();
  await relay.close();
} finally {
  await box.close();
  for (const origin of Object.values(origins)) await origin.close();
}
