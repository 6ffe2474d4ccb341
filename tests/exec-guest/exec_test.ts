/**
 * The exec routes over real HTTP against the in-process services: every behaviour of
 * docs/guest-api.md#exec.
 */
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import {
  call,
  eventually,
  fileAppears,
  groupMembers,
  type GuestUnderTest,
  processAlive,
  withGuest,
} from "./helpers.ts";

const exec = (guest: GuestUnderTest, json: unknown) =>
  call(guest, `${guest.exec}/v1/exec`, { method: "POST", json });

Deno.test("argv and shell-string commands run in the workspace and report the seed's fields", async () => {
  await withGuest({}, async (guest) => {
    const argv = await exec(guest, { command: ["echo", "ok"] });
    assertEquals(argv.status, 200);
    assertEquals(argv.body.stdout, "ok\n");
    assertEquals(argv.body.stderr, "");
    assertEquals(argv.body.exit_code, 0);
    assertEquals(argv.body.timed_out, false);
    assertEquals(argv.body.truncated, false);
    assertEquals(argv.body.output_complete, true);
    assertEquals(argv.body.cwd, guest.workspace);
    assert(/^exec-/.test(argv.body.exec_id), "an exec_id is returned");
    assert(typeof argv.body.duration_ms === "number");
    const shell = await exec(guest, { command: "echo out; echo err >&2; pwd; exit 3" });
    assertEquals(shell.body.stdout, `out\n${guest.workspace}\n`);
    assertEquals(shell.body.stderr, "err\n");
    assertEquals(shell.body.exit_code, 3);
  });
});

Deno.test("stdin is written then closed, so the child sees EOF", async () => {
  await withGuest({}, async (guest) => {
    const answer = await exec(guest, { command: ["wc", "-c"], stdin: "hello" });
    assertEquals(answer.body.stdout.trim(), "5");
    const none = await exec(guest, { command: ["cat"], stdin: null });
    assertEquals(none.body.stdout, "");
    assertEquals(none.body.exit_code, 0);
  });
});

Deno.test("token variables are stripped from the child's environment, others pass", async () => {
  const base = {
    PATH: "/usr/bin:/bin",
    BOX_TOKEN: "leak-1",
    BOX_TOKEN_FILE: "/leak-2",
    BOX_HOST_TOKEN: "leak-3",
    BOX_HOST_TOKEN_FILE: "/leak-4",
    BOX_VNC_PASSWORD: "leak-5",
    BOX_VNC_PASSWORD_FILE: "/leak-6",
    KEEP_ME: "kept",
  };
  await withGuest({}, async (guest) => {
    const answer = await exec(guest, {
      command: ["env"],
      env: { FOO: "bar", BOX_TOKEN: "leak-7" },
    });
    assertStringIncludes(answer.body.stdout, "FOO=bar\n");
    assertStringIncludes(answer.body.stdout, "KEEP_ME=kept\n");
    for (let i = 1; i <= 7; i++) assertNotIncludes(answer.body.stdout, `leak-${i}`);
  }, { baseEnv: base });
});

Deno.test("cwd is jail-checked: a subdirectory works, .. is 400 path_escape", async () => {
  await withGuest({}, async (guest) => {
    await Deno.mkdir(`${guest.workspace}/sub`);
    const inside = await exec(guest, { command: ["pwd"], cwd: "sub" });
    assertEquals(inside.body.stdout, `${guest.workspace}/sub\n`);
    assertEquals(inside.body.cwd, `${guest.workspace}/sub`);
    const outside = await exec(guest, { command: ["pwd"], cwd: "../" });
    assertEquals(outside.status, 400);
    assertEquals(outside.body.error.code, "path_escape");
  });
});

Deno.test("a timeout sends SIGTERM to the group: exit_code 143, timed_out, nothing left alive", async () => {
  await withGuest({}, async (guest) => {
    const answer = await exec(guest, {
      command: `sleep 60 & echo $! > ${guest.workspace}/child.pid; echo started; wait`,
      timeout_ms: 300,
    });
    assertEquals(answer.body.timed_out, true);
    assertEquals(answer.body.exit_code, 143);
    assertEquals(answer.body.stdout, "started\n", "captured output is kept");
    const grandchild = Number(await Deno.readTextFile(`${guest.workspace}/child.pid`));
    assert(await eventually(() => !processAlive(grandchild)), "the backgrounded sleep died too");
  });
});

Deno.test("a group that ignores SIGTERM gets SIGKILL after the grace: exit_code null", async () => {
  await withGuest({ killGraceMs: 200 }, async (guest) => {
    const answer = await exec(guest, {
      command: `trap '' TERM; sleep 60 & echo $! > ${guest.workspace}/child.pid; ` +
        "while :; do wait; done",
      timeout_ms: 200,
    });
    assertEquals(answer.body.timed_out, true);
    assertEquals(answer.body.exit_code, null);
    const grandchild = Number(await Deno.readTextFile(`${guest.workspace}/child.pid`));
    assert(await eventually(() => !processAlive(grandchild)), "no process of the group survives");
  });
});

Deno.test("a grandchild that ignores SIGTERM still gets SIGKILL when the grace is over", async () => {
  await withGuest({ killGraceMs: 300 }, async (guest) => {
    const answer = await exec(guest, {
      command: `(trap '' TERM; exec sleep 60) & echo $! > ${guest.workspace}/child.pid; wait`,
      timeout_ms: 200,
    });
    assertEquals(answer.body.timed_out, true);
    assertEquals(answer.body.exit_code, 143, "the direct child died of SIGTERM");
    const grandchild = Number(await Deno.readTextFile(`${guest.workspace}/child.pid`));
    assert(await eventually(() => !processAlive(grandchild)), "SIGKILL reached it after the grace");
  });
});

Deno.test("the seed's example answers at once with output_complete false and truncated true", async () => {
  await withGuest({}, async (guest) => {
    const answer = await exec(guest, {
      command: `echo A; (sleep 300 & echo $! > ${guest.workspace}/bg.pid); echo B`,
    });
    assertEquals(answer.body.stdout, "A\nB\n");
    assertEquals(answer.body.exit_code, 0);
    assertEquals(answer.body.output_complete, false);
    assertEquals(answer.body.truncated, true);
    const background = Number(await Deno.readTextFile(`${guest.workspace}/bg.pid`));
    assert(processAlive(background), "the backgrounded process is left running, as the seed says");
    await guest.stop();
    assert(await eventually(() => !processAlive(background)), "stopping the guest ends it");
    guest.stop = () => Promise.resolve();
  });
});

Deno.test("output past BOX_MAX_OUTPUT_BYTES is dropped and truncated is true", async () => {
  await withGuest({ maxOutputBytes: 1000 }, async (guest) => {
    const answer = await exec(guest, { command: "head -c 5000 /dev/zero | tr '\\0' a" });
    assertEquals(answer.body.stdout.length, 1000);
    assertEquals(answer.body.truncated, true);
    assertEquals(answer.body.output_complete, true);
    assertEquals(answer.body.exit_code, 0);
  });
});

Deno.test("past BOX_MAX_CONCURRENT_EXECS a call is 429 busy", async () => {
  await withGuest({ maxConcurrentExecs: 2 }, async (guest) => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const started = await exec(guest, { command: ["sleep", "60"], detach: true });
      assertEquals(started.body.status, "running");
      ids.push(started.body.exec_id);
    }
    const third = await exec(guest, { command: ["true"] });
    assertEquals(third.status, 429);
    assertEquals(third.body.error, {
      code: "busy",
      status: 429,
      message: third.body.error.message,
    });
    for (const id of ids) {
      const cancel = await call(guest, `${guest.exec}/v1/exec/${id}`, { method: "DELETE" });
      assertEquals(cancel.body, { exec_id: id, cancelled: true });
    }
  });
});

Deno.test("detach returns at once; GET /v1/exec/{id} polls; ?since= returns only newer output", async () => {
  await withGuest({}, async (guest) => {
    const started = await exec(guest, {
      command: "printf hello; printf oops >&2",
      detach: true,
    });
    assertEquals(started.status, 200);
    assertEquals(started.body.status, "running");
    const url = `${guest.exec}/v1/exec/${started.body.exec_id}`;
    let state = await call(guest, url);
    while (state.body.status === "running") state = await call(guest, url);
    assertEquals(state.body.status, "exited");
    assertEquals(state.body.stdout, "hello");
    assertEquals(state.body.stderr, "oops");
    assertEquals(state.body.exit_code, 0);
    assertEquals(state.body.stdout_next, 5);
    const since = await call(guest, `${url}?since=2&stderr_since=3`);
    assertEquals(since.body.stdout, "llo");
    assertEquals(since.body.stderr, "s");
    const past = await call(guest, `${url}?since=99`);
    assertEquals(past.body.stdout, "");
    const bad = await call(guest, `${url}?since=-1`);
    assertEquals(bad.status, 400);
    assertEquals(bad.body.error.code, "invalid_request");
  });
});

Deno.test("a running detached exec reports the time it has run so far as duration_ms", async () => {
  await withGuest({}, async (guest) => {
    const marker = `${guest.workspace}/started`;
    const started = await exec(guest, {
      command: `echo up > ${marker}; sleep 60`,
      detach: true,
    });
    const url = `${guest.exec}/v1/exec/${started.body.exec_id}`;
    try {
      await fileAppears(marker);
      // The time so far is what is measured: let some pass.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const first = await call(guest, url);
      assertEquals(first.body.status, "running");
      assert(first.body.duration_ms >= 50, `duration_ms ${first.body.duration_ms} while running`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const later = await call(guest, url);
      assert(later.body.duration_ms >= first.body.duration_ms + 20, "it grows while it runs");
    } finally {
      await call(guest, url, { method: "DELETE" });
    }
  });
});

Deno.test("DELETE cancels a detached exec; again it is cancelled false; unknown ids are 404", async () => {
  await withGuest({}, async (guest) => {
    const started = await exec(guest, { command: ["sleep", "60"], detach: true });
    const url = `${guest.exec}/v1/exec/${started.body.exec_id}`;
    const cancel = await call(guest, url, { method: "DELETE" });
    assertEquals(cancel.body, { exec_id: started.body.exec_id, cancelled: true });
    let state = await call(guest, url);
    while (state.body.status === "running") state = await call(guest, url);
    assertEquals(state.body.timed_out, false);
    assertEquals(state.body.exit_code, null);
    const again = await call(guest, url, { method: "DELETE" });
    assertEquals(again.body.cancelled, false);
    const unknown = await call(guest, `${guest.exec}/v1/exec/exec-nope`, { method: "DELETE" });
    assertEquals(unknown.status, 404);
    assertEquals(unknown.body.error.code, "not_found");
  });
});

Deno.test("an in-flight POST /v1/exec cancelled by DELETE answers with timed_out false", async () => {
  await withGuest({}, async (guest) => {
    const marker = `${guest.workspace}/ready`;
    const running = exec(guest, { command: `echo go > ${marker}; sleep 60` });
    await fileAppears(marker);
    const status = await call(guest, `${guest.exec}/v1/status`);
    assertEquals(status.body.slots.in_use, 1);
    const ids: string[] = status.body.slots.running;
    assertEquals(ids.length, 1);
    await call(guest, `${guest.exec}/v1/exec/${ids[0]}`, { method: "DELETE" });
    const answer = await running;
    assertEquals(answer.status, 200);
    assertEquals(answer.body.timed_out, false);
    assertEquals(answer.body.exit_code, null);
  });
});

Deno.test("dropping the connection of POST /v1/exec kills the process group", async () => {
  await withGuest({}, async (guest) => {
    const pidFile = `${guest.workspace}/pid`;
    const hangup = new AbortController();
    const request = fetch(`${guest.exec}/v1/exec`, {
      method: "POST",
      headers: { authorization: `Bearer ${guest.token}`, "content-type": "application/json" },
      body: JSON.stringify({ command: `sleep 60 & echo $! > ${pidFile}; wait` }),
      signal: hangup.signal,
    }).catch(() => undefined);
    const pid = Number(await fileAppears(pidFile));
    assert(processAlive(pid));
    hangup.abort();
    await request;
    assert(await eventually(() => !processAlive(pid)), "the hang-up ended the group");
  });
});

Deno.test("POST /v1/exec/stream sends NDJSON chunks then the exit event", async () => {
  await withGuest({}, async (guest) => {
    const answer = await call(guest, `${guest.exec}/v1/exec/stream`, {
      method: "POST",
      json: { command: "echo one; echo two >&2; exit 4" },
    });
    assertEquals(answer.headers.get("content-type"), "application/x-ndjson");
    const events = answer.text.trim().split("\n").map((line) => JSON.parse(line));
    const exit = events.at(-1);
    assertEquals(exit.type, "exit");
    assertEquals(exit.exit_code, 4);
    assertEquals(exit.output_complete, true);
    assertEquals(exit.truncated, false);
    assertEquals(exit.exec_id, answer.headers.get("x-exec-id"));
    const out = events.filter((e) => e.type === "stdout").map((e) => e.data).join("");
    const err = events.filter((e) => e.type === "stderr").map((e) => e.data).join("");
    assertEquals(out, "one\n");
    assertEquals(err, "two\n");
  });
});

Deno.test("POST /v1/exec/stream with Accept: text/event-stream sends SSE events", async () => {
  await withGuest({}, async (guest) => {
    const answer = await call(guest, `${guest.exec}/v1/exec/stream`, {
      method: "POST",
      json: { command: ["echo", "hi"] },
      headers: { accept: "text/event-stream" },
    });
    assertEquals(answer.headers.get("content-type"), "text/event-stream");
    assertStringIncludes(answer.text, 'event: stdout\ndata: {"type":"stdout","data":"hi\\n"}\n\n');
    assertStringIncludes(answer.text, 'event: exit\ndata: {"type":"exit"');
  });
});

Deno.test("dropping a stream's connection kills the process group", async () => {
  await withGuest({}, async (guest) => {
    const response = await fetch(`${guest.exec}/v1/exec/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${guest.token}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "sleep 60 & echo $!; wait" }),
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n")) text += (await reader.read()).value ?? "";
    const pid = Number(JSON.parse(text.split("\n")[0]).data.trim());
    const pgid = Number(Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ")[2]);
    assert(processAlive(pid));
    await reader.cancel();
    assert(await eventually(() => groupMembers(pgid).length === 0), "the group is gone");
  });
});

Deno.test("pty: true is 400; a timeout above BOX_MAX_TIMEOUT_MS is 400; no such program is exec_failed", async () => {
  await withGuest({ maxTimeoutMs: 1000 }, async (guest) => {
    const pty = await exec(guest, { command: ["true"], pty: true });
    assertEquals(pty.status, 400);
    assertEquals(pty.body.error.code, "invalid_request");
    assertStringIncludes(pty.body.error.message, "/v1/exec/stream");
    const long = await exec(guest, { command: ["true"], timeout_ms: 1001 });
    assertEquals(long.status, 400);
    assertStringIncludes(long.body.error.message, "BOX_MAX_TIMEOUT_MS");
    const missing = await exec(guest, { command: ["/no/such/program"] });
    assertEquals(missing.status, 400);
    assertEquals(missing.body.error.code, "exec_failed");
  });
});

Deno.test("a finished exec is forgotten once BOX_EXEC_RETENTION_MS has passed", async () => {
  await withGuest({ execRetentionMs: 0 }, async (guest) => {
    const started = await exec(guest, { command: ["true"], detach: true });
    const url = `${guest.exec}/v1/exec/${started.body.exec_id}`;
    let state = await call(guest, url);
    for (let i = 0; i < 10_000 && state.status === 200; i++) {
      assertEquals(state.body.status, "running", "with no retention only a running exec is seen");
      state = await call(guest, url);
    }
    assertEquals(state.status, 404);
    assertEquals(state.body.error.code, "not_found");
  });
});

Deno.test("a command that dies of a signal on its own reports 128 + the signal", async () => {
  await withGuest({}, async (guest) => {
    const answer = await exec(guest, { command: "kill -KILL $$" });
    assertEquals(answer.body.exit_code, 137);
    assertEquals(answer.body.timed_out, false);
  });
});
