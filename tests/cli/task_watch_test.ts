/**
 * `gurt task watch` (docs/threat-model.md#the-owners-view) against a fake core: a scripted admin
 * socket that serves a journal and a pending list, and records every approve and refuse it
 * receives.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, gurtCommand } from "../kit/mod.ts";

const ID = "t1";
const NOW = new Date();

function pendingEntry(tool: string, args: string) {
  return {
    approval: 41,
    task: ID,
    key: "loop.1.0",
    kind: "grant",
    tool,
    arguments: args,
    grant: "shell-scratch",
    taint: "private",
    costCents: null,
    created: NOW.toISOString(),
    expires: new Date(NOW.getTime() + 600_000).toISOString(),
  };
}

const PENDING_EVENT = {
  type: "event",
  time: NOW.toISOString(),
  event: "approval_pending",
  detail: { approval: 41, tool: "read_file", expires: NOW.toISOString() },
};

interface FakeCore {
  home: string;
  seen: string[];
  close(): Promise<void>;
}

async function fakeCore(lines: unknown[], items: unknown[]): Promise<FakeCore> {
  const home = await Deno.makeTempDir({ prefix: "gurt-watch-" });
  await Deno.mkdir(`${home}/run/owner-broker`, { recursive: true, mode: 0o700 });
  const seen: string[] = [];
  const ready = Promise.withResolvers<void>();
  const server = Deno.serve({
    path: `${home}/run/owner-broker/admin.sock`,
    onListen: () => ready.resolve(),
  }, (request) => {
    const url = new URL(request.url);
    seen.push(`${request.method} ${url.pathname}`);
    if (url.pathname === `/tasks/${ID}/journal`) {
      return Response.json({ lines, next: lines.length, state: "done", ended: true });
    }
    if (url.pathname === "/approvals") return Response.json({ items });
    if (url.pathname.endsWith("/approve")) {
      return Response.json({ outcome: { outcome: "allowed" } });
    }
    if (url.pathname.endsWith("/refuse")) {
      // As the core answers a refusal (the client checks every answer against its schema).
      return Response.json({ outcome: { outcome: "denied", reason: "approval_refused" } });
    }
    return Response.json({ error: "no such request" }, { status: 404 });
  });
  await ready.promise;
  return {
    home,
    seen,
    async close() {
      await server.shutdown();
      await Deno.remove(home, { recursive: true });
    },
  };
}

async function watch(core: FakeCore, stdin: string, flags: string[] = []) {
  return await gurt(["--home", core.home, "task", "watch", ID, ...flags], { stdin });
}

Deno.test("task watch: an event naming read_file while the core's entry says shell shows shell", async () => {
  const core = await fakeCore([PENDING_EVENT], [
    pendingEntry("shell", '{"command":"rm -rf /home/kyle/scratch/build"}'),
  ]);
  try {
    const run = await watch(core, "41\n");
    assertEquals(run.code, 0, run.stderr);
    assertStringIncludes(run.stdout, '\n    shell {"command":"rm -rf /home/kyle/scratch/build"}\n');
    assert(!run.stdout.includes("read_file"), "nothing of the event is shown");
    assertStringIncludes(run.stderr, "type 41 to approve, n to refuse");
    assertStringIncludes(run.stdout, "approved 41: runs");
    assert(core.seen.includes("POST /approvals/41/approve"), core.seen.join(", "));
  } finally {
    await core.close();
  }
});

Deno.test("task watch: `y` answers nothing and never approves; the end of input then refuses", async () => {
  const core = await fakeCore([PENDING_EVENT], [pendingEntry("shell", '{"command":"ls"}')]);
  try {
    const run = await watch(core, "y\n");
    assertStringIncludes(run.stderr, "that answers nothing: type 41 to approve, n to refuse");
    assertStringIncludes(run.stdout, "end of input: refusing 41");
    assertStringIncludes(run.stdout, "refused 41");
    assert(core.seen.includes("POST /approvals/41/refuse"), core.seen.join(", "));
    assert(!core.seen.includes("POST /approvals/41/approve"), "y never approves");
  } finally {
    await core.close();
  }
});

Deno.test("task watch: a line already waiting in stdin refuses, even with the id after it", async () => {
  const core = await fakeCore([PENDING_EVENT], [pendingEntry("shell", '{"command":"ls"}')]);
  try {
    const run = await watch(core, "please go on\n41\n");
    assertStringIncludes(run.stdout, "refused 41");
    assert(!core.seen.includes("POST /approvals/41/approve"), "the waiting line refused");
  } finally {
    await core.close();
  }
});

Deno.test("task watch: model text holding ESC[8m comes out escaped, its second line marked as the model's, and ESC[0m precedes the block", async () => {
  const step = {
    type: "step",
    time: NOW.toISOString(),
    text: "hidden: \u001b[8msecret\u001b[28m\nnext line\tand a tab",
    data: { loop: { messages: [] } },
  };
  const core = await fakeCore([step, PENDING_EVENT], [pendingEntry("shell", '{"command":"ls"}')]);
  try {
    const run = await watch(core, "", ["--say"]);
    assertStringIncludes(
      run.stdout,
      "[model] hidden: \\u001b[8msecret\\u001b[28m\n  | next line\\tand a tab\n",
    );
    assert(!run.stdout.includes("\u001b[8m"), "no raw conceal sequence reaches the terminal");
    assertStringIncludes(run.stdout, "\u001b[0m41  ");
    assert(!run.stderr.includes("type 41"), "--say does not ask");
    assertEquals(core.seen.filter((s) => s.startsWith("POST")), []);
  } finally {
    await core.close();
  }
});

Deno.test("task watch: an approval missing from the core's list is no longer pending, and nothing is asked", async () => {
  const core = await fakeCore([PENDING_EVENT], []);
  try {
    const run = await watch(core, "41\n");
    assertStringIncludes(run.stdout, "approval 41 is no longer pending");
    assert(!run.stderr.includes("type 41"), "nothing is asked");
    assertEquals(core.seen.filter((s) => s.startsWith("POST")), []);
  } finally {
    await core.close();
  }
});

Deno.test("task watch: a worker's question (/ask) is answered the same way, by its id", async () => {
  const ask = { type: "ask", time: NOW.toISOString(), key: "q1", question: "May I?", approval: 41 };
  const core = await fakeCore([ask], [pendingEntry("box.ask", '{"question":"May I?"}')]);
  try {
    const run = await watch(core, "41\n");
    assertStringIncludes(run.stdout, "[question 41: May I?]");
    assertStringIncludes(run.stdout, "approved 41: runs");
    assert(core.seen.includes("POST /approvals/41/approve"), core.seen.join(", "));
  } finally {
    await core.close();
  }
});

Deno.test("task watch --json prints the journal's lines and contacts nothing else", async () => {
  const core = await fakeCore([PENDING_EVENT], [pendingEntry("shell", '{"command":"ls"}')]);
  try {
    const run = await watch(core, "41\n", ["--json"]);
    assertEquals(JSON.parse(run.stdout.trim()), PENDING_EVENT);
    assertEquals(core.seen, [`GET /tasks/${ID}/journal`]);
  } finally {
    await core.close();
  }
});

/**
 * A watch whose answers are typed one line at a time, each only after the question it answers
 * was printed, as a person at a terminal types them: what was seen on stdout and stderr.
 */
async function typed(core: FakeCore, lines: string[]): Promise<{ code: number; seen: string[] }> {
  const child = gurtCommand(["--home", core.home, "task", "watch", ID], { stdin: "piped" })
    .spawn();
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const stdin = child.stdin.getWriter();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  const seen: string[] = [];
  try {
    for (const line of lines) {
      // The next question: one more "to approve" line on stderr than answers typed so far.
      const questions = () => said.split("to approve, n to refuse").length - 1;
      while (questions() <= seen.length) {
        const { done, value } = await stderr.read();
        if (done) throw new Error(`gurt task watch ended before asking: ${said}`);
        said += value;
      }
      seen.push(core.seen.filter((s) => s.startsWith("POST")).join(",") || "nothing");
      await stdin.write(new TextEncoder().encode(`${line}\n`));
    }
    await stdin.close();
    const status = await child.status;
    for (;;) {
      const { done } = await stderr.read();
      if (done) break;
    }
    await child.stdout.cancel();
    return { code: status.code, seen };
  } finally {
    clearTimeout(guard);
  }
}

Deno.test("task watch: an empty line asks again and refuses nothing; the id typed then approves", async () => {
  const core = await fakeCore([PENDING_EVENT], [pendingEntry("shell", '{"command":"ls"}')]);
  try {
    const run = await typed(core, ["", "   ", "41"]);
    assertEquals(run.code, 0);
    // Before each answer, nothing had been sent: the two empty lines neither refused nor approved.
    assertEquals(run.seen, ["nothing", "nothing", "nothing"]);
    assertEquals(core.seen.filter((s) => s.startsWith("POST")), ["POST /approvals/41/approve"]);
  } finally {
    await core.close();
  }
});

for (const word of ["n", "refuse", "No"]) {
  Deno.test(`task watch: \`${word}\` after an empty line refuses`, async () => {
    const core = await fakeCore([PENDING_EVENT], [pendingEntry("shell", '{"command":"ls"}')]);
    try {
      const run = await typed(core, ["", word]);
      assertEquals(run.seen, ["nothing", "nothing"]);
      assertEquals(core.seen.filter((s) => s.startsWith("POST")), ["POST /approvals/41/refuse"]);
    } finally {
      await core.close();
    }
  });
}

Deno.test("task watch: an empty line with the id sent in the same write answers nothing", async () => {
  // The id came in with the empty line, before the question was asked again: it is dropped.
  const core = await fakeCore([PENDING_EVENT], [pendingEntry("shell", '{"command":"ls"}')]);
  try {
    const run = await watch(core, "\n41\n");
    assertStringIncludes(run.stderr, "an empty line answers nothing: type 41 to approve");
    assertStringIncludes(run.stdout, "refused 41");
    assert(!core.seen.includes("POST /approvals/41/approve"), core.seen.join(", "));
  } finally {
    await core.close();
  }
});
