/**
 * The portal's cost (issue 11): the Approvals page (signed in, 20 pending approvals, rendered on
 * the server with Hono's JSX) and the owner API over loopback TCP, against the baseline measured
 * in the same run: the same list as JSON over the admin socket, which is what `gurt approvals`
 * reads. Sequential requests from one client; figures are requests per second.
 */
import { requestJson } from "../mod/net/mod.ts";
import { adminSocketPath } from "../mod/config/mod.ts";
import { grant } from "../tests/core/harness.ts";
import { startPortalBox } from "../tests/portal/helpers.ts";
import { type BenchRow, printTable } from "./table.ts";

const PENDING = 20;
const ROUNDS = 400;

async function perSecond(run: () => Promise<void>): Promise<number> {
  for (let i = 0; i < 30; i++) await run();
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i++) await run();
  return ROUNDS / ((performance.now() - start) / 1000);
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
  printTable(rows);
} finally {
  aborts.abort();
  await pb.close();
}
