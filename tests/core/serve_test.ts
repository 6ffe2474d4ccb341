/**
 * `gurt serve` as a real process: the default home, SIGTERM, a second serve on the same home, a
 * damaged log, and a call's answer kept across `kill -9`.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { verifyHome } from "../../mod/audit/mod.ts";
import {
  auditRecords,
  exists,
  grant,
  grantFiles,
  makeHome,
  noteKeys,
  startServe,
  startTask,
  stopAllTasks,
  taskRequest,
} from "../kit/mod.ts";

/** A new home whose grants/ holds `grants` (id → TOML). */
function newHome(grants: Record<string, string> = {}): Promise<string> {
  return makeHome({ prefix: "gurt-serve-", dirs: ["grants"], files: grantFiles(grants) });
}

Deno.test("a call answered before kill -9 returns the logged result after the restart; the tool ran once", async () => {
  const home = await newHome({ note: grant({ tool: "example.note" }) });
  try {
    const first = await startServe(home);
    assertEquals(first.exited, null, first.stderr());
    const task = await startTask(first, { tools: ["example.note"] });
    const call = { tool: "example.note", input: { text: "buy milk" }, key: "k1" };
    const before = await taskRequest(home, task, { method: "POST", path: "/call", body: call });
    assertEquals(before.body, { ok: true, output: { line: 1, text: "buy milk" } });
    await first.kill9();

    const second = await startServe(home);
    try {
      assertEquals(second.exited, null, second.stderr());
      assertStringIncludes(second.stderr(), `reopened tasks ${task}`);
      const after = await taskRequest(home, task, { method: "POST", path: "/call", body: call });
      assertEquals(after.body, before.body);
      assertEquals(await noteKeys(home, task), [`${task}.k1`]);
      const ofKey = (await auditRecords(home)).filter((r) => r.event.call === "k1");
      assertEquals(ofKey.map((r) => r.event.type), ["decision", "result"]);
      // The same text under a new key is a new action: it runs, so the count above could fail.
      const other = await taskRequest(home, task, {
        method: "POST",
        path: "/call",
        body: { ...call, key: "k2" },
      });
      assertEquals(other.body.output, { line: 2, text: "buy milk" });
      assertEquals(await noteKeys(home, task), [`${task}.k1`, `${task}.k2`]);
    } finally {
      await stopAllTasks(second);
      assertEquals((await second.stop()).code, 0);
    }
    assertEquals((await verifyHome(home)).failure, null);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("SIGTERM stops gurt serve cleanly: exit 0, the admin socket removed, the lock released", async () => {
  const home = await newHome();
  try {
    const serve = await startServe(home);
    assertEquals(serve.exited, null, serve.stderr());
    const socket = `${home}/run/owner-broker/admin.sock`;
    assert(await exists(socket));
    const status = await serve.stop();
    assertEquals(status.code, 0, serve.stderr());
    assertStringIncludes(serve.stderr(), "gurt serve: stopped");
    assertEquals(await exists(socket), false);
    // The lock is released: a new serve on the same home starts.
    const again = await startServe(home);
    assertEquals(again.exited, null, again.stderr());
    assertEquals((await again.stop()).code, 0);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a second gurt serve on the same home exits 1 with serve-already-running and leaves the first answering", async () => {
  const home = await newHome();
  try {
    const first = await startServe(home);
    try {
      assertEquals(first.exited, null, first.stderr());
      const second = await startServe(home);
      assert(second.exited !== null, "the second serve kept running");
      assertEquals(second.exited.code, 1);
      assertStringIncludes(second.stderr(), "see runbook.md#serve-already-running");
      // The stale-socket removal happens only under the lock: the first still answers.
      assertEquals((await first.admin("GET", "/approvals")).status, 200);
      // Nor did it make or change any folder the first core keeps past the lock: a folder gone
      // while the first runs stays gone, and a mode changed stays changed, until the lock is free.
      await Deno.remove(`${home}/portal`, { recursive: true });
      await Deno.chmod(`${home}/run`, 0o750);
      const third = await startServe(home);
      assertEquals(third.exited?.code, 1, third.stderr());
      assertEquals(await Deno.stat(`${home}/portal`).catch(() => null), null);
      assertEquals((await Deno.stat(`${home}/run`)).mode! & 0o777, 0o750);
    } finally {
      assertEquals((await first.stop()).code, 0);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a damaged audit log stops gurt serve with exit 1 and audit-chain-broken", async () => {
  const home = await newHome({ echo: grant({ tool: "example.echo" }) });
  try {
    const first = await startServe(home);
    const task = await startTask(first, { tools: ["example.echo"] });
    const call = { tool: "example.echo", input: { text: "hello" }, key: "k1" };
    assertEquals(
      (await taskRequest(home, task, { method: "POST", path: "/call", body: call }))
        .body.ok,
      true,
    );
    await stopAllTasks(first);
    assertEquals((await first.stop()).code, 0);
    const file = [...Deno.readDirSync(`${home}/audit`)].map((e) => e.name)
      .find((n) => n.endsWith(".jsonl"))!;
    // The first record's task id is changed by one character: its hash no longer matches.
    const text = await Deno.readTextFile(`${home}/audit/${file}`);
    // (Another last character than the id's own: an id ending in x would otherwise stay as it was.)
    const other = task.endsWith("x") ? "y" : "x";
    const damaged = text.replace(`"task":"${task}"`, `"task":"${task.slice(0, -1)}${other}"`);
    assert(damaged !== text);
    await Deno.writeTextFile(`${home}/audit/${file}`, damaged);

    const second = await startServe(home);
    assert(second.exited !== null, "serve started on a damaged log");
    assertEquals(second.exited.code, 1);
    assertStringIncludes(second.stderr(), "see runbook.md#audit-chain-broken");
    assertEquals(await exists(`${home}/run/owner-broker/admin.sock`), false);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("with no home and no gurt.toml, gurt serve runs on the default home under XDG_DATA_HOME", async () => {
  const root = await Deno.makeTempDir({ prefix: "gurt-default-" });
  // The default home of root is /var/lib/gurt; an ordinary user's is $XDG_DATA_HOME/gurt.
  const asUser = Deno.uid() === 0 ? { uid: 65534, gid: 65534 } : {};
  if (Deno.uid() === 0) await Deno.chown(root, 65534, 65534);
  const home = `${root}/xdg/gurt`;
  try {
    const serve = await startServe(home, {
      passHome: false,
      clearEnv: true,
      env: { HOME: root, XDG_DATA_HOME: `${root}/xdg`, DENO_DIR: `${root}/deno` },
      ...asUser,
    });
    assertEquals(serve.exited, null, serve.stderr());
    assertStringIncludes(serve.stderr(), `box home ${home}`);
    assertEquals((await serve.admin("GET", "/approvals")).body, { items: [] });
    assertEquals((await Deno.stat(`${home}/run/owner-broker`)).mode! & 0o777, 0o700);
    assertEquals((await serve.stop()).code, 0);
    assertEquals(await exists(`${home}/run/owner-broker/admin.sock`), false);
    assertEquals((await verifyHome(home)).failure, null);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
