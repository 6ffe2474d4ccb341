/**
 * The portal's cost (issue 11): the Approvals page (signed in, 20 pending approvals, rendered on
 * the server with Hono's JSX) and the owner API over loopback TCP, against the baseline measured
 * in the same run: the same list as JSON over the admin socket, which is what `gurt approvals`
 * reads. The portal reaches the core over a Unix socket, as its own process does. Then the Audit
 * page on a log of 100k records (issue 22): a page view reads one page of records through the
 * core's index, against the baseline of verifying the whole log (verifyHome), which every view of
 * the page did before; and the index's first reading of that log, against the same verification.
 * Sequential requests from one client; figures are requests per second, or seconds.
 */
import { type AuditEvent, AuditLogIndex, AuditWriter, verifyHome } from "../mod/audit/mod.ts";
import { requestJson } from "../mod/net/mod.ts";
import { adminSocketPath } from "../mod/config/mod.ts";
import { grant } from "../tests/kit/mod.ts";
import { startPortalBox } from "../tests/portal/helpers.ts";
import { type BenchRow, printTable } from "./table.ts";
import { allowedEcho, echoResult } from "./audit_events.ts";

const PENDING = 20;
const ROUNDS = 400;
const BIG_LOG = 100_000;

async function perSecond(run: () => Promise<void>, rounds = ROUNDS, warm = 30): Promise<number> {
  for (let i = 0; i < warm; i++) await run();
  const start = performance.now();
  for (let i = 0; i < rounds; i++) await run();
  return rounds / ((performance.now() - start) / 1000);
}

/** Record `i` of the big log: a decision allowed, then its result, in turn, over ten tasks. */
function event(i: number): AuditEvent {
  const session = `t${Math.floor(i / 2) % 10}`;
  return i % 2 === 0 ? allowedEcho(session, i) : echoResult(session, i);
}

/** A home whose log holds `count` records over three days, written by the real writer. */
async function bigLogHome(count: number): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "gurt-portal-bench-" });
  let read = 0;
  const start = Date.parse("2026-11-01T00:00:00.000Z");
  const perDay = Math.ceil(count / 3);
  const clock = () => new Date(start + Math.floor(read / perDay) * 86_400_000 + read++);
  const { writer } = await AuditWriter.open(home, { clock });
  for (let base = 0; base < count; base += 2000) {
    await Promise.all(
      Array.from(
        { length: Math.min(2000, count - base) },
        (_, i) => writer.append(event(base + i)),
      ),
    );
  }
  writer.close();
  return home;
}

const pb = await startPortalBox({ grants: { echo: grant({ tool: "example.echo", mode: "ask" }) } });
const aborts = new AbortController();
try {
  const task = await pb.box.startTask();
  const calls = [];
  for (let i = 0; i < PENDING; i++) {
    calls.push(
      task.call("example.echo", { text: `<b>note ${i}</b>\u202e` }, `k${i}`, aborts.signal)
        .catch(() => {}),
    );
  }
  while ((await pb.box.admin("GET", "/approvals")).body.items.length < PENDING) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const { cookie } = await pb.signIn();
  const token = (await Deno.readTextFile(`${pb.box.home}/portal/owner.token`)).trim();
  const socket = adminSocketPath(pb.box.home);

  const adminJson = await perSecond(async () => {
    const answer = await requestJson(socket, { method: "GET", path: "/approvals" });
    if (answer.status !== 200) throw new Error(`admin answered ${answer.status}`);
  });
  const page = await perSecond(async () => {
    const response = await fetch(`${pb.origin}/approvals`, { headers: { cookie } });
    if (response.status !== 200) throw new Error(`page answered ${response.status}`);
    await response.text();
  });
  const api = await perSecond(async () => {
    const response = await fetch(`${pb.origin}/api/approvals`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (response.status !== 200) throw new Error(`API answered ${response.status}`);
    await response.text();
  });
  const rows: BenchRow[] = [
    {
      what: `Approvals page, ${PENDING} pending, HTML over TCP`,
      unit: "req/s",
      value: page,
      baselineWhat: "GET /approvals JSON on the admin socket",
      baseline: adminJson,
      target: ">= 0.3",
    },
    {
      what: "owner API GET /api/approvals, Bearer, TCP",
      unit: "req/s",
      value: api,
      baselineWhat: "GET /approvals JSON on the admin socket",
      baseline: adminJson,
      target: ">= 0.5",
    },
  ];
  rows.push(...await auditRows());
  printTable(rows);
} finally {
  aborts.abort();
  await pb.close();
}

async function auditRows(): Promise<BenchRow[]> {
  const home = await bigLogHome(BIG_LOG);
  const verifyStart = performance.now();
  await verifyHome(home);
  const verifySeconds = (performance.now() - verifyStart) / 1000;
  const indexStart = performance.now();
  await new AuditLogIndex(home).refresh();
  const indexSeconds = (performance.now() - indexStart) / 1000;
  const big = await startPortalBox({ home });
  try {
    // The core's own index has read the log by the first view; the figures are of views after.
    const { cookie } = await big.signIn();
    const view = await perSecond(
      async () => {
        const response = await fetch(`${big.origin}/audit?from=${BIG_LOG / 2}`, {
          headers: { cookie },
        });
        if (response.status !== 200) throw new Error(`page answered ${response.status}`);
        await response.text();
      },
      100,
      10,
    );
    const verify = await perSecond(
      async () => {
        await verifyHome(home);
      },
      3,
      1,
    );
    return [
      {
        what: `Audit page, 50 of ${BIG_LOG.toLocaleString("en")} records, HTML over TCP`,
        unit: "req/s",
        value: view,
        baselineWhat: "verifyHome of the whole log (each view before)",
        baseline: verify,
        target: ">= 10",
      },
      {
        what: `the core's index, first reading of ${BIG_LOG.toLocaleString("en")} records`,
        unit: "s",
        value: indexSeconds,
        baselineWhat: "verifyHome of the whole log, once",
        baseline: verifySeconds,
        target: "<= 5",
      },
    ];
  } finally {
    await big.close();
  }
}
