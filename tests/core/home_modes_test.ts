/**
 * The box home's guarded folders and files are checked at every start, not only when the core makes
 * them: a mode that lets others read is tightened (and said on stderr), a mode that lets others
 * write, another owner, a link or a file in a folder's place stops the start with a sentence naming
 * the path. As root, a task's user cannot read a grant of a home whose grants/ the owner made 0755.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { ensureHomeLayout } from "../../mod/core/home_layout.ts";
import { grant, runAs, startServe, startTask, stopAllTasks, taskSocket } from "../kit/mod.ts";

function mode(path: string): number {
  return Deno.lstatSync(path).mode! & 0o7777;
}

/** A home laid out by hand, as an owner might before the first `gurt serve`. */
async function handMadeHome(): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "gurt-hand-" });
  await Deno.mkdir(`${home}/grants`);
  await Deno.chmod(`${home}/grants`, 0o755);
  await Deno.writeTextFile(`${home}/grants/echo.toml`, grant({ tool: "example.echo" }));
  await Deno.chmod(`${home}/grants/echo.toml`, 0o644);
  await Deno.mkdir(`${home}/broker/sessions`, { recursive: true });
  await Deno.chmod(`${home}/broker`, 0o755);
  await Deno.chmod(`${home}/broker/sessions`, 0o755);
  await Deno.mkdir(`${home}/audit`);
  await Deno.chmod(`${home}/audit`, 0o750);
  return home;
}

Deno.test({
  name:
    "as root, grants/ made 0755 by hand (and broker/, audit/ loose too) is 0700 after the first gurt serve, which says so, and a task's user cannot read a grant",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const home = await handMadeHome();
    try {
      const serve = await startServe(home);
      try {
        assertEquals(serve.exited, null, serve.stderr());
        const task = await startTask(serve, { tools: ["example.echo"] });
        const user = Deno.statSync(taskSocket(home, task));
        assert(user.uid !== 0, "the task's socket belongs to its own user");
        // The same user reads what others may read, so the refusal below is the grant folder's.
        const who = { uid: user.uid!, gid: user.gid! };
        assertEquals((await runAs(who, "cat /etc/hostname")).code, 0);
        const { code, stderr } = await runAs(who, `cat ${home}/grants/echo.toml`);
        assert(code !== 0, "a task's user read a grant");
        assertStringIncludes(stderr, "Permission denied");
        for (const folder of ["grants", "broker", "broker/sessions", "audit"]) {
          assertEquals(mode(`${home}/${folder}`), 0o700, folder);
        }
        assertStringIncludes(serve.stderr(), `${home}/grants had mode 0755 and is now 0700`);
        assertStringIncludes(serve.stderr(), `${home}/audit had mode 0750 and is now 0700`);
        await stopAllTasks(serve);
      } finally {
        assertEquals((await serve.stop()).code, 0, serve.stderr());
      }
      // At the next start everything is as the core keeps it: nothing more to say.
      const again = await startServe(home);
      try {
        assertEquals(again.exited, null, again.stderr());
        assert(!again.stderr().includes("had mode"), again.stderr());
      } finally {
        assertEquals((await again.stop()).code, 0);
      }
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test("gurt serve refuses a home whose grants/ others may write, naming it, and changes nothing", async () => {
  const home = await handMadeHome();
  try {
    await Deno.chmod(`${home}/grants`, 0o777);
    const serve = await startServe(home);
    assert(serve.exited !== null, "gurt serve started on a grants/ anyone may write");
    assertEquals(serve.exited.code, 1);
    assertStringIncludes(serve.stderr(), `${home}/grants has mode 0777`);
    assertStringIncludes(serve.stderr(), "see runbook.md#home-permissions");
    assertEquals(mode(`${home}/grants`), 0o777);
    assertEquals(await Deno.lstat(`${home}/run/owner-broker/admin.sock`).catch(() => null), null);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a home found at 0755 loses its read bits; tasks/ found 0700 is 0711; a loose audit file is 0600, each said", async () => {
  const home = await handMadeHome();
  try {
    await Deno.chmod(home, 0o755);
    await Deno.mkdir(`${home}/tasks`);
    await Deno.chmod(`${home}/tasks`, 0o700);
    await Deno.writeTextFile(`${home}/audit/2020-01-01.jsonl`, "");
    await Deno.chmod(`${home}/audit/2020-01-01.jsonl`, 0o644);
    const notices = await ensureHomeLayout(home);
    assertEquals(mode(home), 0o711);
    assertEquals(mode(`${home}/tasks`), 0o711);
    assertEquals(mode(`${home}/grants`), 0o700);
    assertEquals(mode(`${home}/run`), 0o700);
    assertEquals(mode(`${home}/run/owner-broker`), 0o700);
    assertEquals(mode(`${home}/audit/2020-01-01.jsonl`), 0o600);
    const said = notices.join("\n");
    for (const path of [home, `${home}/tasks`, `${home}/audit/2020-01-01.jsonl`]) {
      assertStringIncludes(said, `${path} had mode`);
    }
    // Folders the core made itself are not news.
    assert(!said.includes(`${home}/run `), said);
    assertEquals(await ensureHomeLayout(home), []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/** Expects the layout to refuse `home` with a sentence naming `path` and the runbook entry. */
async function assertRefused(home: string, path: string, words: string): Promise<void> {
  const error = await assertRejects(() => ensureHomeLayout(home), Error);
  const message = error.message;
  assertStringIncludes(message, `${path} ${words}`);
  assert(message.endsWith("see runbook.md#home-permissions"), message);
}

Deno.test("a guarded folder that is a link or a file, or that others may write, and an audit file or gurt.toml others may write, stop the start", async () => {
  const cases: [string, (home: string) => Promise<void>, string, string][] = [
    [
      "grants link",
      async (home) => {
        await Deno.remove(`${home}/grants`, { recursive: true });
        await Deno.symlink("/etc", `${home}/grants`);
      },
      "grants",
      "is a link",
    ],
    [
      "sessions file",
      async (home) => {
        await Deno.remove(`${home}/broker/sessions`, { recursive: true });
        await Deno.writeTextFile(`${home}/broker/sessions`, "");
      },
      "broker/sessions",
      "is not a folder",
    ],
    [
      "tasks writable",
      async (home) => {
        await Deno.mkdir(`${home}/tasks`, { mode: 0o700 });
        await Deno.chmod(`${home}/tasks`, 0o733);
      },
      "tasks",
      "has mode 0733",
    ],
    ["home writable", (home) => Deno.chmod(home, 0o757), "", "has mode 0757"],
    [
      "audit file writable",
      async (home) => {
        await Deno.writeTextFile(`${home}/audit/2020-01-01.jsonl`, "");
        await Deno.chmod(`${home}/audit/2020-01-01.jsonl`, 0o666);
      },
      "audit/2020-01-01.jsonl",
      "has mode 0666",
    ],
    [
      "gurt.toml writable",
      async (home) => {
        await Deno.writeTextFile(`${home}/gurt.toml`, "");
        await Deno.chmod(`${home}/gurt.toml`, 0o646);
      },
      "gurt.toml",
      "has mode 0646",
    ],
  ];
  for (const [name, prepare, relative, words] of cases) {
    const home = await handMadeHome();
    try {
      await prepare(home);
      const path = relative === "" ? home : `${home}/${relative}`;
      const before = Deno.lstatSync(path).mode;
      await assertRefused(home, path, words).catch((error) => {
        throw new Error(`${name}: ${error.message}`);
      });
      assertEquals(Deno.lstatSync(path).mode, before, `${name}: the path was changed`);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  }
});

Deno.test({
  name: "as root, a guarded folder or an audit file owned by another user stops the start",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    for (const relative of ["grants", "audit/.lock"]) {
      const home = await handMadeHome();
      try {
        if (relative.startsWith("audit/")) {
          await Deno.writeTextFile(`${home}/${relative}`, "", { mode: 0o600 });
        }
        await Deno.chown(`${home}/${relative}`, 65534, 65534);
        await assertRefused(home, `${home}/${relative}`, "is owned by uid 65534, not by uid 0");
      } finally {
        await Deno.remove(home, { recursive: true });
      }
    }
  },
});
