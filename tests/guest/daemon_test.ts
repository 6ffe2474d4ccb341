/** Smoke tests of the real daemon: `main.ts guest` as a child process, driven over HTTP and curl. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  call,
  eventually,
  fileAppears,
  processAlive,
  runDaemonToEnd,
  startDaemon,
} from "../exec-guest/helpers.ts";
import { guestArgs, withHome } from "../kit/mod.ts";

Deno.test("the daemon serves health openly, refuses other routes without the token, and shuts down", async () => {
  const guest = await startDaemon();
  try {
    const health = await fetch(`${guest.exec}/v1/health`);
    assertEquals(await health.json(), { status: "ok" });
    const hostHealth = await fetch(`${guest.host}/v1/health`);
    assertEquals(await hostHealth.json(), { status: "ok" });
    for (
      const url of [`${guest.exec}/v1/status`, `${guest.host}/v1/ready`, `${guest.host}/v1/info`]
    ) {
      const bare = await fetch(url);
      assertEquals(bare.status, 401);
      assertEquals(await bare.json(), {
        error: { code: "unauthorized", message: "missing or invalid bearer token", status: 401 },
      });
      const wrong = await fetch(url, { headers: { authorization: "Bearer not-the-token" } });
      assertEquals(wrong.status, 401);
      await wrong.body?.cancel();
    }
    const ready = await call(guest, `${guest.host}/v1/ready`);
    assertEquals(ready.body, {
      status: "ready",
      service: "box-host",
      exec_ready: true,
      desktop_ready: false,
    });
    const info = await call(guest, `${guest.host}/v1/info`);
    assertEquals(info.body.endpoints, {
      exec: guest.exec,
      host: guest.host,
      scope: "container-local",
    });
    assertEquals(info.body.workspace, guest.workspace);
  } finally {
    const end = await guest.shutdown();
    assertEquals(end.code, 0, end.stderr);
  }
});

Deno.test("the seed's curl example answers at once with output_complete false", async () => {
  const guest = await startDaemon();
  try {
    const curl = await new Deno.Command("curl", {
      args: [
        "-fsS",
        `${guest.exec}/v1/exec`,
        "-H",
        `Authorization: Bearer ${guest.token}`,
        "-H",
        "Content-Type: application/json",
        "-d",
        '{"command":"echo A; (sleep 300 &); echo B"}',
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(curl.code, 0, new TextDecoder().decode(curl.stderr));
    const body = JSON.parse(new TextDecoder().decode(curl.stdout));
    assertEquals(body.stdout, "A\nB\n");
    assertEquals(body.truncated, true);
    assertEquals(body.output_complete, false);
  } finally {
    const end = await guest.shutdown();
    assertEquals(end.code, 0, end.stderr);
  }
});

Deno.test("x-request-id is echoed when sent and minted when not, on answers and errors", async () => {
  const guest = await startDaemon();
  try {
    const echoed = await call(guest, `${guest.exec}/v1/status`, {
      headers: { "x-request-id": "req-42" },
    });
    assertEquals(echoed.headers.get("x-request-id"), "req-42");
    const error = await fetch(`${guest.exec}/v1/status`, { headers: { "x-request-id": "req-43" } });
    await error.body?.cancel();
    assertEquals(error.headers.get("x-request-id"), "req-43");
    const minted = await call(guest, `${guest.host}/v1/info`);
    assert((minted.headers.get("x-request-id") ?? "").length >= 16, "an id is minted");
  } finally {
    await guest.stop();
  }
});

Deno.test("with BOX_HOST_TOKEN set the host service takes only it; the exec service keeps BOX_TOKEN", async () => {
  const guest = await startDaemon({ BOX_TOKEN: "exec-token-1", BOX_HOST_TOKEN: "host-token-2" });
  try {
    const host = { token: "host-token-2" };
    const exec = { token: "exec-token-1" };
    assertEquals((await call(host, `${guest.host}/v1/info`)).status, 200);
    assertEquals((await call(exec, `${guest.host}/v1/info`)).status, 401);
    assertEquals((await call(exec, `${guest.exec}/v1/status`)).status, 200);
    assertEquals((await call(host, `${guest.exec}/v1/status`)).status, 401);
  } finally {
    await guest.stop();
  }
});

Deno.test("without BOX_TOKEN the guest refuses to start and points to the runbook", async () => {
  const workspace = await Deno.makeTempDir({ prefix: "gurt-guest-ws-" });
  try {
    const end = await runDaemonToEnd(
      { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      guestArgs(workspace),
    );
    assertEquals(end.code, 1);
    assertStringIncludes(end.stderr, "see runbook.md#guest-token-missing");
  } finally {
    await Deno.remove(workspace);
  }
});

Deno.test("a workspace that does not exist stops the guest with a runbook pointer", async () => {
  const end = await runDaemonToEnd({ BOX_TOKEN: "t" }, ["--workspace", "/no/such/workspace"]);
  assertEquals(end.code, 1);
  assertStringIncludes(end.stderr, "see runbook.md#guest-workspace-missing");
});

Deno.test("SIGTERM stops the daemon gracefully and ends the process groups of its execs", async () => {
  const guest = await startDaemon();
  const pidFile = `${guest.workspace}/sleep.pid`;
  let end: { code: number; stderr: string } | undefined;
  try {
    const started = await call(guest, `${guest.exec}/v1/exec`, {
      method: "POST",
      json: { command: `sleep 300 & echo $! > ${pidFile}; wait`, detach: true },
    });
    assertEquals(started.body.status, "running");
    const sleeper = Number(await fileAppears(pidFile));
    assert(processAlive(sleeper));
    Deno.kill(guest.pid, "SIGTERM");
    end = await guest.shutdown();
    assertEquals(end.code, 0, end.stderr);
    assert(await eventually(() => !processAlive(sleeper)), "the exec's sleep was stopped");
  } finally {
    if (end === undefined) await guest.stop();
  }
});

Deno.test("BOX_TOKEN_FILE is read inside the guest role (its permissions grant exactly that file)", async () => {
  await withHome(async (dir) => {
    await Deno.writeTextFile(`${dir}/token`, "token-from-file-42\n");
    const guest = await startDaemon({ BOX_TOKEN: "", BOX_TOKEN_FILE: `${dir}/token` });
    try {
      assertEquals(guest.token, "token-from-file-42");
      assertEquals((await call(guest, `${guest.exec}/v1/status`)).status, 200);
      assertEquals((await call({ token: "" }, `${guest.exec}/v1/status`)).status, 401);
    } finally {
      await guest.stop();
    }
  }, { prefix: "gurt-token-" });
});
