/**
 * The session state store (docs/grants.md#taint) on real files: absent means private and trusted,
 * the taint only rises, writes are atomic, and a damaged or "public" file is refused with its
 * pointer.
 */
import {
  raiseSessionState,
  readSessionState,
  sessionStatePath,
  StateUnreadableError,
} from "../../mod/policy/mod.ts";
import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
  assertThrows,
} from "../assert.ts";
import { withHome } from "../kit/mod.ts";

Deno.test("a task with no state file is private and trusted, and reading creates nothing", async () => {
  await withHome(async (home) => {
    assertEquals(await readSessionState(home, "t1"), { taint: "private", untrusted: false });
    let exists = true;
    try {
      await Deno.stat(`${home}/broker`);
    } catch {
      exists = false;
    }
    assert(!exists, "a read must not create the broker directory");
  });
});

Deno.test("the first result creates the file with exactly the seed's JSON", async () => {
  await withHome(async (home) => {
    const state = await raiseSessionState(home, {
      task: "t1",
      label: { resultClass: "public", untrusted: false },
    });
    assertEquals(state, { taint: "private", untrusted: false });
    const file = `${home}/broker/sessions/t1.json`;
    assertEquals(await Deno.readTextFile(file), '{"taint":"private","untrusted":false}');
    assertEquals((await Deno.stat(file)).mode! & 0o777, 0o600);
    assertEquals((await Deno.stat(`${home}/broker/sessions`)).mode! & 0o777, 0o700);
    assertEquals([...Deno.readDirSync(`${home}/broker/sessions`)].map((e) => e.name), ["t1.json"]);
  });
});

Deno.test("taint rises to the highest class seen and untrusted stays set: neither goes down", async () => {
  await withHome(async (home) => {
    await raiseSessionState(home, {
      task: "t1",
      label: { resultClass: "secret", untrusted: false },
    });
    await raiseSessionState(home, {
      task: "t1",
      label: { resultClass: "private", untrusted: true },
    });
    const after = await raiseSessionState(home, {
      task: "t1",
      label: { resultClass: "public", untrusted: false },
    });
    assertEquals(after, { taint: "secret", untrusted: true });
    assertEquals(await readSessionState(home, "t1"), { taint: "secret", untrusted: true });
    assertEquals(await readSessionState(home, "t2"), { taint: "private", untrusted: false });
  });
});

Deno.test("a state file that says public is refused with state_unreadable's pointer", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/broker/sessions`, { recursive: true });
    await Deno.writeTextFile(
      `${home}/broker/sessions/t1.json`,
      '{"taint":"public","untrusted":false}',
    );
    const error = await assertRejects(() => readSessionState(home, "t1"), StateUnreadableError);
    assertStringIncludes(error.message, "see runbook.md#broker-state-damaged");
    assertStringIncludes(error.message, "public");
    await assertRejects(
      () =>
        raiseSessionState(home, { task: "t1", label: { resultClass: "secret", untrusted: false } }),
      StateUnreadableError,
    );
    assertEquals(
      await Deno.readTextFile(`${home}/broker/sessions/t1.json`),
      '{"taint":"public","untrusted":false}',
      "a damaged file is never overwritten",
    );
  });
});

Deno.test("a state file that does not parse, or has other fields, is refused", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/broker/sessions`, { recursive: true });
    const damaged = [
      '{"taint":"private","untrusted":fal',
      "",
      '["private", false]',
      '{"taint":"private"}',
      '{"taint":"private","untrusted":false,"x":1}',
      '{"taint":"Secret","untrusted":false}',
      '{"taint":"secret","untrusted":"no"}',
    ];
    for (const text of damaged) {
      await Deno.writeTextFile(`${home}/broker/sessions/t1.json`, text);
      const error = await assertRejects(() => readSessionState(home, "t1"), StateUnreadableError);
      assertStringIncludes(error.message, "see runbook.md#broker-state-damaged", text);
    }
  });
});

Deno.test("a state path that is a directory is refused, not treated as absent", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/broker/sessions/t1.json`, { recursive: true });
    await assertRejects(() => readSessionState(home, "t1"), StateUnreadableError, "cannot be read");
  });
});

Deno.test("a write leaves no temporary file and replaces the old file in one rename", async () => {
  await withHome(async (home) => {
    await raiseSessionState(home, {
      task: "t1",
      label: { resultClass: "private", untrusted: false },
    });
    const before = (await Deno.stat(`${home}/broker/sessions/t1.json`)).ino;
    await raiseSessionState(home, {
      task: "t1",
      label: { resultClass: "secret", untrusted: false },
    });
    const after = (await Deno.stat(`${home}/broker/sessions/t1.json`)).ino;
    assert(before !== after, "the file is replaced by a rename, never rewritten in place");
    assertEquals([...Deno.readDirSync(`${home}/broker/sessions`)].map((e) => e.name), ["t1.json"]);
  });
});

Deno.test("a task id that could leave the sessions directory is refused", () => {
  for (const bad of ["../x", "a/b", ".", "..", "", ".hidden", "a".repeat(129)]) {
    assertThrows(() => sessionStatePath("/h", bad), Error, "cannot name a state file");
  }
  assertEquals(sessionStatePath("/h", "task-1.2_b"), "/h/broker/sessions/task-1.2_b.json");
});
