/**
 * The session helper (mod/exec-guest/session_helper.c): the checked-in bytes are what its source
 * builds to, and the program run for real starts a new session and finds programs as execvp does.
 * Then the exec service with each launcher: the helper and util-linux setsid.
 */
import { helperFailure, installSessionHelper } from "../../mod/exec-guest/session_helper.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  call,
  eventually,
  groupMembers,
  type GuestUnderTest,
  processAlive,
  startInProcess,
} from "./helpers.ts";
import { assertBuildsAsCheckedIn } from "../kit/mod.ts";

const decoder = new TextDecoder();

/** Runs the helper with this argv and environment (nothing inherited). */
async function runHelper(
  helper: string,
  argv: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(helper, {
    args: argv,
    env: options.env ?? {},
    clearEnv: true,
    cwd: options.cwd,
    stdin: "null",
  }).output();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

async function withHelper(work: (helper: string, dir: string) => Promise<void>): Promise<void> {
  const installed = await installSessionHelper();
  assert(
    installed !== null && installed.path !== null,
    "the helper installs on x86-64 Linux with an executable /tmp",
  );
  const helper = installed.path;
  const dir = await Deno.makeTempDir({ prefix: "gurt-helper-test-" });
  try {
    await work(helper, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await installed.remove();
  }
}

Deno.test("the checked-in session helper is exactly what session_helper.c builds to", async () => {
  await assertBuildsAsCheckedIn({
    script: "build_session_helper.sh",
    elf: "exec-guest/session_helper_elf.ts",
  }, "helper");
});

Deno.test("the helper runs the program as the leader of a new session, argv and env unchanged", async () => {
  await withHelper(async (helper) => {
    const script = 'read -r stat < /proc/self/stat; echo "$stat"; printf "[%s]" "$@"; echo; ' +
      'printf "%s" "$FOO"';
    const ran = await runHelper(helper, ["/bin/sh", "-c", script, "zero", "a b", "", "ü\t$x"], {
      env: { FOO: "bar baz", PATH: "/usr/bin:/bin" },
    });
    assertEquals(ran.code, 0, ran.stderr);
    const [stat, args, foo] = ran.stdout.split("\n");
    const fields = stat.split(" ");
    assertEquals(fields[4], fields[0], "the process group is its own");
    assertEquals(fields[5], fields[0], "the session is its own");
    assertEquals(args, "[a b][][ü\t$x]");
    assertEquals(foo, "bar baz");
  });
});

Deno.test("the helper searches PATH as execvp does: skips missing and non-executable files", async () => {
  await withHelper(async (helper, dir) => {
    for (const sub of ["a", "b", "c"]) await Deno.mkdir(`${dir}/${sub}`);
    await Deno.writeTextFile(`${dir}/b/prog`, "#!/bin/sh\necho from b\n", { mode: 0o644 });
    await Deno.writeTextFile(`${dir}/c/prog`, "#!/bin/sh\necho from c\n", { mode: 0o755 });
    const path = `/nowhere:${dir}/a:${dir}/b:${dir}/c`;
    const found = await runHelper(helper, ["prog"], { env: { PATH: path } });
    assertEquals(found.stdout, "from c\n");
    // Only a file without execute permission: EACCES, reported as the helper's failure line.
    const denied = await runHelper(helper, ["prog"], { env: { PATH: `${dir}/a:${dir}/b` } });
    assertEquals([denied.code, denied.stdout], [127, ""]);
    assertEquals(helperFailure(denied.code, denied.stderr), "permission denied");
    const missing = await runHelper(helper, ["no-such-program-anywhere"], {
      env: { PATH: path },
    });
    assertEquals(helperFailure(missing.code, missing.stderr), "no such program");
    // An empty entry is the current directory; no PATH at all is /bin:/usr/bin.
    const here = await runHelper(helper, ["prog"], { env: { PATH: "/nowhere:" }, cwd: `${dir}/c` });
    assertEquals(here.stdout, "from c\n");
    const fallback = await runHelper(helper, ["sh", "-c", "echo default"]);
    assertEquals(fallback.stdout, "default\n");
    // A name with a slash is not searched.
    const direct = await runHelper(helper, ["c/prog"], { env: { PATH: `${dir}/b` }, cwd: dir });
    assertEquals(direct.stdout, "from c\n");
  });
});

Deno.test("the helper runs a file without #! with /bin/sh, and reports what cannot start", async () => {
  await withHelper(async (helper, dir) => {
    await Deno.writeTextFile(`${dir}/plain`, 'echo "plain $1"\n', { mode: 0o755 });
    const plain = await runHelper(helper, [`${dir}/plain`, "arg"]);
    assertEquals(plain.stdout, "plain arg\n");
    const none = await runHelper(helper, []);
    assertEquals(helperFailure(none.code, none.stderr), "error 14 from execve");
    const empty = await runHelper(helper, [""]);
    assertEquals(helperFailure(empty.code, empty.stderr), "no such program");
    const directory = await runHelper(helper, [dir]);
    assertEquals(helperFailure(directory.code, directory.stderr), "permission denied");
    // A program that itself exits 127 is not a failure to start.
    const own = await runHelper(helper, ["/bin/sh", "-c", "echo oops >&2; exit 127"]);
    assertEquals(helperFailure(own.code, own.stderr), undefined);
  });
});

Deno.test("the helper refuses to run when it cannot start a new session (already a leader)", async () => {
  await withHelper(async (helper) => {
    // util-linux setsid makes itself a session leader, then executes the helper in its place.
    const ran = await runHelper("/usr/bin/setsid", [helper, "/bin/true"]);
    assertEquals(ran.code, 127);
    assertEquals(helperFailure(ran.code, ran.stderr), "could not start a new session");
  });
});

for (const launcher of ["the session helper", "util-linux setsid"]) {
  const overrides = launcher === "util-linux setsid"
    ? { sessionHelper: null, maxTimeoutMs: 60_000 }
    : { maxTimeoutMs: 60_000 };
  const exec = (guest: GuestUnderTest, json: unknown) =>
    call(guest, `${guest.exec}/v1/exec`, { method: "POST", json });

  Deno.test(`with ${launcher}: an exec leads its own group, a timeout ends the whole group`, async () => {
    const guest = await startInProcess(overrides);
    try {
      const stat = await exec(guest, {
        command: ["/bin/sh", "-c", 'read -r stat < /proc/self/stat; echo "$stat"'],
      });
      const fields = stat.body.stdout.split(" ");
      assertEquals([fields[4], fields[5]], [fields[0], fields[0]], "its own group and session");
      const ran = await exec(guest, { command: "sleep 300 & echo $! $$; wait", timeout_ms: 300 });
      assertEquals([ran.status, ran.body.timed_out], [200, true]);
      const [child, shell] = ran.body.stdout.trim().split(" ").map(Number);
      assert(await eventually(() => !processAlive(child)), "the backgrounded sleep is gone");
      assert(await eventually(() => groupMembers(shell).length === 0), "the group is gone");
    } finally {
      await guest.stop();
    }
  });

  Deno.test(`with ${launcher}: a program that cannot start is 400 exec_failed, saying why`, async () => {
    const guest = await startInProcess(overrides);
    try {
      const missing = await exec(guest, { command: ["no-such-program-for-gurt"] });
      assertEquals(missing.status, 400);
      assertEquals(missing.body.error.code, "exec_failed");
      assertStringIncludes(missing.body.error.message, '"no-such-program-for-gurt"');
      assertStringIncludes(
        missing.body.error.message.toLowerCase(),
        launcher === "the session helper" ? "no such program" : "no such file",
      );
      const own = await exec(guest, { command: ["/bin/sh", "-c", "echo no >&2; exit 127"] });
      assertEquals([own.status, own.body.exit_code, own.body.stderr], [200, 127, "no\n"]);
    } finally {
      await guest.stop();
    }
  });
}

Deno.test("installing the helper removes the helper folders of guests that are gone at once, and only those", async () => {
  const probe = await Deno.makeTempDir();
  const tmp = probe.slice(0, probe.lastIndexOf("/"));
  await Deno.remove(probe);
  const folder = (name: string) => `${tmp}/gurt-guest-${name}-test`;
  const left = folder("4000001"); // its guest died: no lock, old
  const live = folder("4000002"); // its guest runs, maybe in another pid namespace: locked
  // Its guest died a moment ago: a folder by its final name was locked before it was named so.
  const young = folder("4000003");
  const others = folder("4000004"); // another user's
  const unrelated = `${tmp}/gurt-guestbook-4000005-test`;
  const pending = `${tmp}/gurt-guest-new-4000006-test`; // a guest about to lock it: kept
  const stale = `${tmp}/gurt-guest-new-4000007-test`; // by its first name, an hour old: swept
  const all = [left, live, young, others, unrelated, pending, stale];
  const old = new Date(Date.now() - 10 * 60_000);
  for (const dir of all) {
    await Deno.mkdir(dir);
    await Deno.writeTextFile(`${dir}/setsid`, "x");
    if (dir !== young && dir !== pending) await Deno.utime(dir, old, old);
  }
  const asRoot = Deno.uid() === 0;
  if (asRoot) await Deno.chown(others, 65534, 65534); // never ours to remove
  const liveLock = await Deno.open(live, { read: true });
  await liveLock.lock(true);
  const installed = await installSessionHelper();
  try {
    assert(installed !== null && installed.path !== null);
    assert(installed.path.startsWith(`${tmp}/gurt-guest-${Deno.pid}-`), installed.path);
    const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);
    assertEquals(await exists(left), false, "the folder of a guest that is gone");
    assertEquals(await exists(live), true, "a locked folder");
    assertEquals(await exists(young), false, "the folder of a guest that is just gone");
    assertEquals(await exists(pending), true, "a folder not yet locked by its first name");
    assertEquals(await exists(stale), false, "an old unlocked folder by its first name");
    assertEquals(await exists(unrelated), true, "a folder that is not a helper's");
    if (asRoot) assertEquals(await exists(others), true, "another user's folder");
    // This guest's own folder is locked while it runs, and freed by remove.
    const own = installed.path.slice(0, installed.path.lastIndexOf("/"));
    const mine = await Deno.open(own, { read: true });
    assertEquals(await mine.tryLock(true), false, "the running guest holds its folder's lock");
    mine.close();
  } finally {
    liveLock.close();
    await installed?.remove();
    for (const dir of all) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
