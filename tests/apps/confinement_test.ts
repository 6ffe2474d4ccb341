/**
 * What a hostile app (tests/apps/hostile_server.js, someone else's code holding the owner's keys)
 * cannot reach: the box home (gurt.toml, audit/, grants/, a live task's home), the vault file,
 * another app's folder and home; any network when it lists no hosts; a host off its list through
 * its proxy (an app_blocked record names it); a key it did not declare or the owner turned off
 * for it. Its uid is its own, neither root nor a task's, and is gone with the app.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { mountPoints } from "../../mod/sandbox/mod.ts";
import { auditRecords, type Json, waitFor } from "../kit/mod.ts";
import { type AppBox, startAppBox } from "./app_kit.ts";
import { addHostile, pidsWith, probe } from "./hostile_kit.ts";

const asRoot = Deno.uid() === 0;
const haveNode = await Deno.stat("/usr/bin/node").then(() => true, () => false);

async function withBox(
  fn: (box: AppBox) => Promise<void>,
  toml = "",
): Promise<void> {
  const box = await startAppBox(toml);
  try {
    await fn(box);
  } finally {
    await box.close();
  }
}

Deno.test({
  name:
    "an app reads no box home, vault file, live task's home or other app's folder, and writes its own home",
  ignore: !asRoot || !haveNode,
  fn: () =>
    withBox(async (box) => {
      await box.setKey("SOME_KEY", "sk-some-key-value-0123456789");
      await addHostile(box, "other");
      await addHostile(box, "evil");
      const task = await box.task(["evil.*", "other.*"]);
      const otherHome = `${box.home}/apps/other/home`;
      const written = await probe(box, task, "other.write", {
        path: `${otherHome}/secret.txt`,
        text: "other app's secret",
      });
      assertEquals(written, { written: true });
      // The folders on the way to its own (made for its binds) hold that way alone.
      assertEquals(await probe(box, task, "evil.read", { path: box.home }), { read: ["apps"] });
      const apps = await probe(box, task, "evil.read", { path: `${box.home}/apps` });
      assertEquals(apps, { read: ["evil"] });
      const paths = [
        `${box.home}/gurt.toml`,
        `${box.home}/audit`,
        `${box.home}/grants`,
        `${box.home}/tasks/${task}`,
        `${box.home}/vault.env`,
        `${box.home}/apps/evil/app.log`,
        `${box.home}/apps/evil/tools.json`,
        `${box.home}/apps/other/app.toml`,
        `${box.home}/apps/other/evil.js`,
        otherHome,
        `${otherHome}/secret.txt`,
      ];
      for (const path of paths) {
        // Each is there, outside the app's sandbox.
        await Deno.stat(path);
        const got = await probe(box, task, "evil.read", { path });
        assert(
          got.failed === "ENOENT" || got.failed === "EACCES",
          `${path}: ${JSON.stringify(got)}`,
        );
      }
      // Its own home is the one folder it writes; its folder (its code) is read-only.
      const own = await probe(box, task, "evil.facts");
      const mine = await probe(box, task, "evil.write", {
        path: `${own.env.HOME}/mine.txt`,
        text: "mine",
      });
      assertEquals(mine, { written: true });
      assertEquals(await Deno.readTextFile(`${box.home}/apps/evil/home/mine.txt`), "mine");
      const code = await probe(box, task, "evil.write", {
        path: `${box.home}/apps/evil/evil.js`,
        text: "replaced",
      });
      assert(code.failed === "EROFS" || code.failed === "EACCES", JSON.stringify(code));
    }),
});

Deno.test({
  name:
    "an app's home holds [apps] home_bytes at most: a server that fills it gets ENOSPC, keeps its files across a restart, and is unmounted at removal",
  ignore: !asRoot || !haveNode,
  fn: () =>
    withBox(async (box) => {
      await addHostile(box, "evil");
      const task = await box.task(["evil.*"]);
      const home = `${box.home}/apps/evil/home`;
      // app_kit's gurt.toml: [apps] home_bytes = 64 MiB.
      const bytes = 96 * 1024 * 1024;
      const filled = await probe(box, task, "evil.fill", { path: `${home}/big`, bytes });
      assertEquals(filled.failed, "ENOSPC", JSON.stringify(filled));
      assert(filled.wrote < 64 * 1024 * 1024, JSON.stringify(filled));
      await Deno.remove(`${home}/big`);
      await probe(box, task, "evil.write", { path: `${home}/kept.txt`, text: "kept" });
      // A core killed while the app runs leaves its home mounted; removing the app still removes
      // it whole.
      await box.restart({ kill: true });
      const again = await box.task(["evil.*"]);
      assertEquals(await probe(box, again, "evil.read", { path: `${home}/kept.txt` }), {
        read: "kept",
      });
      await box.restart({ kill: true });
      assert((await mountPoints()).includes(home));
      const removed = await box.admin("DELETE", "/apps/evil");
      assertEquals(removed.status, 200, JSON.stringify(removed.body));
      assert(!(await mountPoints()).includes(home), "the app's home is still mounted");
      await assertRejects(() => Deno.lstat(`${box.home}/apps/evil`), Deno.errors.NotFound);
    }),
});

Deno.test({
  name: "an app without hosts has only lo and reaches neither the host's loopback nor outside",
  ignore: !asRoot || !haveNode,
  fn: () =>
    withBox(async (box) => {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const accepted: Deno.Conn[] = [];
      const accepting = (async () => {
        for await (const conn of listener) accepted.push(conn);
      })();
      try {
        await addHostile(box, "evil");
        const task = await box.task(["evil.*"]);
        const facts = await probe(box, task, "evil.facts");
        assertEquals(facts.interfaces, ["lo"]);
        // /sys is not mounted in the sandbox; where it were, it would show lo alone.
        const sys = facts.sys_class_net;
        assert(sys.failed === "ENOENT" || JSON.stringify(sys) === '["lo"]', JSON.stringify(sys));
        for (const [host, port] of [["127.0.0.1", listener.addr.port], ["1.1.1.1", 80]]) {
          const got = await probe(box, task, "evil.connect", { host, port });
          assert(got.connected !== true, `${host}:${port}: ${JSON.stringify(got)}`);
        }
        const proxy = await probe(box, task, "evil.proxy", { target: "example.com:443" });
        assert(proxy.status === undefined, JSON.stringify(proxy));
        assertEquals(accepted.length, 0);
      } finally {
        listener.close();
        await accepting.catch(() => {});
      }
    }),
});

Deno.test({
  name:
    "an app with hosts reaches its host through its proxy; another host is refused and an app_blocked record names it",
  ignore: !asRoot || !haveNode,
  fn: async () => {
    const origin = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("origin says hello"),
    );
    const port = origin.addr.port;
    try {
      await withBox(
        async (box) => {
          await addHostile(box, "evil", { extra: [`hosts = ["allowed.example:${port}"]`] });
          const task = await box.task(["evil.*"]);
          const allowed = await probe(box, task, "evil.proxy", {
            target: `allowed.example:${port}`,
          });
          assertEquals(allowed.status, 200, JSON.stringify(allowed));
          assertStringIncludes(allowed.body, "origin says hello");
          const refused = await probe(box, task, "evil.proxy", { target: `other.example:${port}` });
          assertEquals(refused.status, 403, JSON.stringify(refused));
          let seen: unknown[] = [];
          await waitFor(async () => {
            seen = await auditRecords(box.home);
            return seen.some(({ event }: Json) =>
              event.type === "app_blocked" && event.app === "evil" &&
              event.host === "other.example" && event.port === port
            );
          }, { what: "an app_blocked record", seen: () => JSON.stringify(seen) });
          const blocked = (await auditRecords(box.home)).filter((r) =>
            r.event.type === "app_blocked"
          );
          assert(blocked.every((r) => r.event.host !== "allowed.example"), JSON.stringify(blocked));
        },
        `[egress]
resolve = { "allowed.example" = "127.0.0.1", "other.example" = "127.0.0.1" }
allow_private_hosts = ["allowed.example", "other.example"]
`,
      );
    } finally {
      await origin.shutdown();
    }
  },
});

Deno.test({
  name: "as root an app runs as its own user, not root nor a task's, and is gone with the app",
  ignore: !asRoot || !haveNode,
  fn: () =>
    withBox(async (box) => {
      const evil = await addHostile(box, "evil");
      const task = await box.task(["evil.*"]);
      const facts = await probe(box, task, "evil.facts");
      const passwd = await Deno.readTextFile("/etc/passwd");
      // Named by the install's own id, which another install of "evil" never shares.
      const instance = (await Deno.readTextFile(`${box.home}/apps/evil/instance`)).trim();
      const user = `box-app-${instance}`;
      const line = passwd.split("\n").find((l) => l.startsWith(`${user}:`));
      assert(line !== undefined, `no user ${user}`);
      const [, , uid, gid] = line.split(":").map(Number);
      assertEquals([facts.uid, facts.gid], [uid, gid]);
      assert(facts.uid !== 0);
      const taskLine = passwd.split("\n").find((l) => l.startsWith(`box-${task}:`));
      if (taskLine !== undefined) assert(Number(taskLine.split(":")[2]) !== facts.uid);
      // On the host, the app's processes run as that user.
      const pids = await pidsWith(evil.marker);
      assert(pids.length > 0);
      for (const pid of pids) {
        const status = await Deno.readTextFile(`/proc/${pid}/status`);
        const uids = status.match(/^Uid:\s+(.*)$/m)![1].split(/\s+/).map(Number);
        assert(uids.every((id) => id === uid), `pid ${pid}: ${uids}`);
      }
      const removed = await box.admin("DELETE", "/apps/evil");
      assertEquals(removed.status, 200, JSON.stringify(removed.body));
      assert(!(await Deno.readTextFile("/etc/passwd")).includes(`${user}:`));
      assertEquals(await pidsWith(evil.marker), []);
    }),
});

const ENV_VALUE = "sk-env-key-0123456789abcdef";
const FILE_VALUE = "sk-file-key-0123456789abcdef";
const ARG_VALUE = "sk-arg-key-0123456789abcdef";
const UNDECLARED = "sk-undeclared-key-0123456789";

Deno.test({
  name:
    "an app holds exactly its declared keys (env, a 0400 file of its own, an argument seen only in its pid namespace), never an undeclared one",
  ignore: !asRoot || !haveNode,
  fn: () =>
    withBox(async (box) => {
      await box.setKey("ENV_KEY", ENV_VALUE);
      await box.setKey("FILE_KEY", FILE_VALUE);
      await box.setKey("ARG_KEY", ARG_VALUE);
      await box.setKey("UNDECLARED_KEY", UNDECLARED);
      await addHostile(box, "evil", {
        args: ["{ARG_KEY}"],
        extra: [
          "[secrets.ENV_KEY]",
          'env = "ENV_KEY"',
          "[secrets.FILE_KEY]",
          'file = "token.txt"',
          "[secrets.ARG_KEY]",
          "arg = true",
        ],
      });
      const task = await box.task(["evil.*"]);
      // The task's view is redacted; the app's own facts are read from its home, as it wrote them.
      const facts = await probe(box, task, "evil.facts");
      const own = await appFacts(box, task);
      assertEquals(own.env.ENV_KEY, ENV_VALUE);
      assertEquals(own.argv.at(-1), ARG_VALUE);
      const file = own.files["token.txt"];
      assertEquals([file.mode, file.uid, file.text], [0o400, own.uid, FILE_VALUE]);
      assert(!JSON.stringify(own).includes(UNDECLARED), "the app holds an undeclared key");
      assert(!JSON.stringify(own).includes("UNDECLARED_KEY"));
      assert(!JSON.stringify(facts).includes(ENV_VALUE), "the task saw the app's key");
      // On the host, the argument's value is in the argv of no process outside the app's pid
      // namespace (and in the app's own, so the look would have found it).
      const hostNs = await Deno.readLink("/proc/self/ns/pid");
      const holders = await pidsWith(ARG_VALUE);
      assert(holders.length > 0, "the app's own argv holds the value");
      for (const pid of holders) {
        const ns = await Deno.readLink(`/proc/${pid}/ns/pid`).catch(() => hostNs);
        assert(ns !== hostNs, `pid ${pid} outside the app's pid namespace holds the value`);
      }
    }),
});

/** The app's facts as it saw them (unredacted): written to its home by a probe, read on the host. */
async function appFacts(box: AppBox, task: string): Promise<Json> {
  const path = `${box.home}/apps/evil/home/facts.json`;
  await probe(box, task, "evil.write_facts", { path });
  return JSON.parse(await Deno.readTextFile(path));
}

Deno.test({
  name:
    "a key the owner turns off for an app fails its next call with a sentence naming both, stops its server, and on again works",
  ignore: !asRoot || !haveNode,
  fn: () =>
    withBox(async (box) => {
      await box.setKey("ENV_KEY", ENV_VALUE);
      const evil = await addHostile(box, "evil", {
        extra: ["[secrets.ENV_KEY]", 'env = "ENV_KEY"'],
      });
      const task = await box.task(["evil.*"]);
      assertEquals(await probe(box, task, "evil.echo", { n: 1 }), { echo: { n: 1 } });
      assert((await pidsWith(evil.marker)).length > 0);
      const denied = await box.admin("POST", "/api/vault/ENV_KEY/deny", { app: "evil" });
      assertEquals(denied.status, 200, JSON.stringify(denied.body));
      const off = await box.call(task, "evil.echo", { n: 2 });
      assertEquals(off.body.ok, false, JSON.stringify(off.body));
      assertStringIncludes(off.body.error, "ENV_KEY");
      assertStringIncludes(off.body.error, "evil");
      // The server that holds the key is gone, not left running with it.
      await waitFor(async () => (await pidsWith(evil.marker)).length === 0, {
        what: "the app's server to stop",
      });
      const allowed = await box.admin("POST", "/api/vault/ENV_KEY/allow", { app: "evil" });
      assertEquals(allowed.status, 200, JSON.stringify(allowed.body));
      assertEquals(await probe(box, task, "evil.echo", { n: 3 }), { echo: { n: 3 } });
    }),
});
