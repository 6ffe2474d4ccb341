/**
 * The core's start over a long audit log (issue 28): the time from launching `gurt serve` to its
 * "admin socket ready", and its resident memory once the portal's audit index has caught up (the
 * first page of records answered), over logs of 10k, 100k and 1M records, against the baseline
 * measured in the same run: the same start on an empty log. Each log is made once with the chain's
 * own code (the writer's line format, hashed as it hashes) over four daily files, and kept under
 * /tmp between runs; each is copied into a fresh home, started once (shown as "first": no core has
 * read that log before), then restarted ROUNDS times. Targets, on a restart at 1M records: ready
 * within 1 s more than the empty log's, and at most 50 MB more memory.
 */
import { type AuditEvent, auditEvent, sha256Hex, ZERO_HASH } from "../mod/audit/mod.ts";
import { adminSocketPath } from "../mod/config/mod.ts";
import { requestJson } from "../mod/net/mod.ts";
import { gurtArgs } from "../tests/kit/mod.ts";
import { allowedEcho, echoResult } from "./audit_events.ts";

const SIZES = (Deno.env.get("GURT_BENCH_LOG_SIZES") ?? "10000,100000,1000000")
  .split(",").map(Number);
const ROUNDS = Number(Deno.env.get("GURT_BENCH_ROUNDS") ?? "3");
const CACHE = "/tmp/gurt-bench-audit-logs";
const FILES = 4;
const MB = 1024 * 1024;

/** Record `i` of a log: tasks of 200 records, each started, ~96 calls, 3 costs and its end. */
function event(i: number): AuditEvent {
  const task = `t${Math.floor(i / 200)}`;
  const at = i % 200;
  if (at === 0) {
    return {
      type: "task_started",
      task,
      worker: "loop",
      tools: ["example.echo"],
      budget_cents: 500,
    };
  }
  if (at === 199) return { type: "task_ended", task, state: "done", reason: null };
  if (at % 50 === 25) return { type: "cost", task, cents: 3, what: "model" };
  if (at % 2 === 1) return allowedEcho(task, i);
  return echoResult(task, i);
}

/** The audit folder of a log of `count` records, made once and kept in CACHE. */
async function cachedLog(count: number): Promise<string> {
  const dir = `${CACHE}/${count}`;
  if (await Deno.stat(`${dir}/.done`).then(() => true, () => false)) return dir;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const encoder = new TextEncoder();
  const perFile = Math.ceil(count / FILES);
  const start = Date.parse("2026-11-01T00:00:00.000Z");
  let prev = ZERO_HASH;
  for (let f = 0; f * perFile < count; f++) {
    const day = new Date(start + f * 86_400_000).toISOString().slice(0, 10);
    const file = await Deno.open(`${dir}/${day}.jsonl`, { create: true, write: true, mode: 0o600 });
    let lines: string[] = [];
    const end = Math.min(count, (f + 1) * perFile);
    for (let seq = f * perFile; seq < end; seq++) {
      const time = new Date(start + f * 86_400_000 + seq).toISOString();
      const line = JSON.stringify({ seq, time, prev, event: auditEvent.parse(event(seq)) });
      prev = sha256Hex(encoder.encode(line));
      lines.push(line);
      if (lines.length === 10_000 || seq === end - 1) {
        const bytes = encoder.encode(lines.join("\n") + "\n");
        let written = 0;
        while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
        lines = [];
      }
    }
    file.close();
  }
  await Deno.writeTextFile(`${dir}/.done`, "");
  return dir;
}

/** A home holding a copy of the log `log` (null for none). */
async function homeWith(log: string | null): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "gurt-start-bench-" });
  await Deno.chmod(home, 0o700);
  await Deno.writeTextFile(`${home}/gurt.toml`, '[portal]\nlisten = "127.0.0.1:0"\n');
  if (log !== null) {
    const copied = await new Deno.Command("cp", { args: ["-r", log, `${home}/audit`] }).output();
    if (!copied.success) throw new Error(`cp failed: ${new TextDecoder().decode(copied.stderr)}`);
    await Deno.remove(`${home}/audit/.done`);
  }
  return home;
}

/** kB figures of /proc/<pid>/status: VmRSS and VmHWM. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1]);
  return { rss: field("VmRSS") * 1024, peak: field("VmHWM") * 1024 };
}

interface Start {
  readySeconds: number;
  rss: number;
  peak: number;
}

/** One start of `gurt serve` on `home`: until ready, then until the index answers; then stops. */
async function startOnce(home: string): Promise<Start> {
  const began = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["--home", home, "serve"]),
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    let text = "";
    const decoder = new TextDecoder();
    const reader = child.stderr.getReader();
    while (!text.includes("admin socket ready")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`gurt serve exited before it was ready:\n${text}`);
      text += decoder.decode(value, { stream: true });
    }
    const readySeconds = (performance.now() - began) / 1000;
    (async () => {
      while (!(await reader.read()).done) { /* drain */ }
    })().catch(() => {});
    // The index reads the log in the background; a page of records waits until it has.
    const page = await requestJson(adminSocketPath(home), {
      method: "GET",
      path: "/audit/records?limit=50",
    });
    if (page.status !== 200) throw new Error(`/audit/records answered ${page.status}`);
    return { readySeconds, ...await memoryOf(child.pid) };
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

/**
 * The first start on a copy of `log`, and the median of ROUNDS restarts after it (by time to
 * ready; memory from that same restart).
 */
async function starts(log: string | null): Promise<{ first: Start; restart: Start }> {
  const home = await homeWith(log);
  try {
    const first = await startOnce(home);
    const restarts: Start[] = [];
    for (let i = 0; i < ROUNDS; i++) restarts.push(await startOnce(home));
    restarts.sort((a, b) => a.readySeconds - b.readySeconds);
    return { first, restart: restarts[Math.floor(restarts.length / 2)] };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

const logs = new Map<number, string>();
for (const size of SIZES) {
  const made = performance.now();
  logs.set(size, await cachedLog(size));
  const seconds = (performance.now() - made) / 1000;
  if (seconds > 1) {
    console.log(`made a log of ${size.toLocaleString("en")} records in ${seconds.toFixed(1)} s`);
  }
}
const empty = (await starts(null)).restart;
console.log(
  "| log | start | ready | ready - empty | RSS | RSS - empty | peak RSS | target | met |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
const row = (what: string, kind: string, start: Start, target = "", met = "") =>
  console.log(
    `| ${what} | ${kind} | ${start.readySeconds.toFixed(2)} s | ${
      (start.readySeconds - empty.readySeconds).toFixed(2)
    } s | ${(start.rss / MB).toFixed(0)} MB | ${((start.rss - empty.rss) / MB).toFixed(0)} MB | ${
      (start.peak / MB).toFixed(0)
    } MB | ${target} | ${met} |`,
  );
row("empty (baseline)", "restart", empty);
for (const size of SIZES) {
  const { first, restart } = await starts(logs.get(size)!);
  const met = restart.readySeconds - empty.readySeconds <= 1 && restart.rss - empty.rss <= 50 * MB;
  const what = `${size.toLocaleString("en")} records`;
  row(what, "first", first);
  row(what, "restart", restart, "ready +1 s, RSS +50 MB", met ? "yes" : "no");
}
