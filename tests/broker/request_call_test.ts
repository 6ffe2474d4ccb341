/**
 * requestCall: a request a task makes by another door, decided as a call of a given tool through a
 * real core's call transaction. Its Decision record is on disk before it runs and its Result
 * record after; each request has a fresh key, so two identical ones are two calls; a denied one
 * never runs; one the grant asks about is held past the approval wait while its requester stays,
 * and withdrawn when it goes.
 */
import { assert, assertEquals } from "../assert.ts";
import { requestCall, type RequestEnd } from "../../mod/broker/mod.ts";
import {
  grant,
  type Json,
  pendingApproval,
  startBox,
  type TestBox,
  until,
  waitFor,
} from "../kit/mod.ts";

const GRANTS = {
  github: grant({ tool: "http.request", hosts: ["api.github.com"] }),
  gitlab: grant({ tool: "http.request", hosts: ["gitlab.com"], mode: "ask" }),
};

function request(host: string): Record<string, unknown> {
  return { method: "GET", host, path: "/user" };
}

/** The task's context in the core, as the egress door that calls requestCall has it. */
function contextOf(box: TestBox, id: string) {
  const task = box.core.tasks.handle(id);
  assert(task !== undefined, `task ${id} is not live`);
  return { deps: box.core.deps, task };
}

/** `promise`, or a failure naming `what` if it has not settled in `ms`: a test fails, never hangs. */
async function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The audit records of call `key`, as [type, outcome] in order. */
function recordsOf(records: Json[], key: string): [string, unknown][] {
  return records.filter((r) => r.event.call === key || r.event.key === key)
    .map((r) => [r.event.type, r.event.outcome ?? null]);
}

Deno.test("an allowed request writes its Decision record before it runs and its Result record after, with a fresh key each time, and answers what it ran to", async () => {
  const box = await startBox({ grants: GRANTS });
  try {
    const task = await box.startTask();
    const ctx = contextOf(box, task.id);
    const runs: { records: Json[] }[] = [];
    const run = async () => {
      runs.push({ records: await box.records() });
      return { status: 200, n: runs.length };
    };
    const ends: RequestEnd[] = [];
    for (let i = 0; i < 2; i++) {
      ends.push(
        await requestCall(ctx, {
          tool: "http.request",
          input: request("api.github.com"),
          run,
          signal: new AbortController().signal,
        }),
      );
    }
    assertEquals(ends, [
      { kind: "answer", answer: { ok: true, output: { status: 200, n: 1 } } },
      { kind: "answer", answer: { ok: true, output: { status: 200, n: 2 } } },
    ]);
    const records = await box.records();
    const decisions = records.filter((r) =>
      r.event.type === "decision" && r.event.tool === "http.request"
    );
    assertEquals(decisions.length, 2, "two identical requests must be two calls");
    const keys = decisions.map((r) => r.event.call as string);
    assert(keys[0] !== keys[1], `one key for two requests: ${keys[0]}`);
    for (const key of keys) assert(/^http\.request-[0-9a-f-]{36}$/.test(key), key);
    for (const [index, key] of keys.entries()) {
      const decision = decisions[index];
      assertEquals(decision.event.outcome, { outcome: "allowed" });
      assertEquals(JSON.parse(decision.event.arguments), request("api.github.com"));
      // When it ran: its Decision record was in the log, its Result record was not.
      assertEquals(recordsOf(runs[index].records, key), [["decision", { outcome: "allowed" }]]);
      const after = recordsOf(records, key).map(([type]) => type);
      assertEquals(after, ["decision", "result"]);
      const result = records.find((r) => r.event.type === "result" && r.event.call === key);
      assert(result.seq > decision.seq, "the Result record is not after the Decision record");
    }
  } finally {
    await box.close();
  }
});

Deno.test("a request no grant allows is denied with its Decision record and never runs", async () => {
  const box = await startBox({ grants: GRANTS });
  try {
    const task = await box.startTask();
    let ran = 0;
    const end = await requestCall(contextOf(box, task.id), {
      tool: "http.request",
      input: request("evil.example.com"),
      run: () => {
        ran++;
        return Promise.resolve("sent");
      },
      signal: new AbortController().signal,
    });
    assertEquals(ran, 0);
    assertEquals(end, {
      kind: "answer",
      answer: { ok: false, error: "Denied: no grant allows this call." },
    });
    const records = await box.records();
    const decision = records.find((r) => r.event.type === "decision");
    assertEquals(decision.event.outcome, { outcome: "denied", reason: "no_grant" });
    assertEquals(recordsOf(records, decision.event.call), [["decision", decision.event.outcome]]);
  } finally {
    await box.close();
  }
});

Deno.test("a request the grant asks about is held past the approval wait while its requester stays, runs once approved, and is withdrawn unrun when its requester goes", async () => {
  const box = await startBox({ grants: GRANTS, env: { BOX_APPROVAL_WAIT_MS: "100" } });
  try {
    const task = await box.startTask();
    const ctx = contextOf(box, task.id);
    let ran = 0;
    const run = () => {
      ran++;
      return Promise.resolve({ status: 204 });
    };
    const held = requestCall(ctx, {
      tool: "http.request",
      input: request("gitlab.com"),
      preview: "GET https://gitlab.com/user",
      run,
      signal: new AbortController().signal,
    });
    let settled = false;
    held.then(() => settled = true, () => settled = true);
    const id = await pendingApproval(box, task);
    const shown = (await box.admin("GET", "/approvals")).body.items.find((item: Json) =>
      item.approval === id
    );
    assert(
      JSON.stringify(shown).includes("GET https://gitlab.com/user"),
      `the preview is not shown: ${JSON.stringify(shown)}`,
    );
    // Three times the approval wait: a /call would have answered pending by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assertEquals([settled, ran], [false, 0]);
    assertEquals((await box.admin("POST", `/approvals/${id}/approve`)).status, 200);
    assertEquals(await within(held, "the approved request"), {
      kind: "answer",
      answer: { ok: true, output: { status: 204 } },
    });
    assertEquals(ran, 1);
    const key = (await box.records()).find((r) => r.seq === id).event.call;
    assertEquals((recordsOf(await box.records(), key)).map(([type]) => type), [
      "decision",
      "approval",
      "result",
    ]);

    const gone = new AbortController();
    const dropped = requestCall(ctx, {
      tool: "http.request",
      input: request("gitlab.com"),
      run,
      signal: gone.signal,
    });
    const second = await waitFor(async () => {
      const items = (await box.admin("GET", "/approvals")).body.items as Json[];
      return items.find((item) => item.task === task.id)?.approval ?? false;
    });
    assert(second !== id);
    gone.abort();
    assertEquals(await within(dropped, "the withdrawn request"), { kind: "withdrawn" });
    await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 0);
    assertEquals(ran, 1);
  } finally {
    await box.close();
  }
});
