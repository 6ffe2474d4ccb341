/**
 * @modelcontextprotocol/server-postgres as an app against a PostgreSQL cluster this test starts:
 * its database URL, password included, is a vault key delivered as an argument (`arg = true`), and
 * the app reaches the database through a TCP forward (`ports`), its one way to 127.0.0.1:<port>,
 * allowed by [egress] allow_private_hosts. A query through a task's broker returns the table's
 * rows; the password is in no task result, journal, audit record, app.log, nor in the argv of any
 * process outside the app's own pid namespace. Without allow_private_hosts the forward refuses the
 * loopback address and records app_blocked.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { auditRecords } from "../kit/box.ts";
import { type AppBox, haveTestApps, POSTGRES, startAppBox } from "./app_kit.ts";
import { type Cluster, havePostgres, startCluster } from "./postgres_kit.ts";

const PASSWORD = `pg-${crypto.randomUUID()}`;

function manifest(port: number): string {
  return [
    'kind = "mcp"',
    `command = ["node", ${JSON.stringify(POSTGRES)}, "{PG_URL}"]`,
    `ports = ["127.0.0.1:${port}"]`,
    "[secrets.PG_URL]",
    "arg = true",
    "",
  ].join("\n");
}

async function addPostgresApp(box: AppBox, cluster: Cluster): Promise<string> {
  await box.setKey(
    "PG_URL",
    `postgresql://${cluster.user}:${PASSWORD}@127.0.0.1:${cluster.port}/postgres`,
  );
  const added = await box.add(await box.source("pg", manifest(cluster.port)), "pg");
  assertEquals(added.status, 200, JSON.stringify(added.body));
  assertEquals(added.body.app.ports, [`127.0.0.1:${cluster.port}`]);
  await box.grant({ tool: "pg.query" });
  return await box.task(["pg.*"]);
}

/**
 * Every process's pid, pid namespace and argv, split by whether it is in a pid namespace of the
 * processes of user `uid` other than this test's own (the app's; its launcher, bubblewrap, runs
 * as that user in the host's namespace and counts as outside).
 */
async function processes(uid: number) {
  const own = await Deno.readLink("/proc/self/ns/pid");
  const appSpaces = new Set<string>();
  const all: { pid: string; space: string; argv: string }[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^[0-9]+$/.test(entry.name)) continue;
    try {
      const space = await Deno.readLink(`/proc/${entry.name}/ns/pid`);
      const status = await Deno.readTextFile(`/proc/${entry.name}/status`);
      const argv = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      const owner = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      if (owner === uid && space !== own) appSpaces.add(space);
      all.push({ pid: entry.name, space, argv: argv.replaceAll("\0", " ") });
    } catch {
      // It ended while read.
    }
  }
  return {
    appSpaces,
    inside: all.filter((p) => appSpaces.has(p.space)),
    outside: all.filter((p) => !appSpaces.has(p.space)),
  };
}

async function uidOf(user: string): Promise<number> {
  const line = (await Deno.readTextFile("/etc/passwd")).split("\n")
    .find((entry) => entry.startsWith(`${user}:`));
  assert(line !== undefined, `no user ${user}`);
  return Number(line.split(":")[2]);
}

Deno.test({
  name: "server-postgres as an app: rows through the broker, the password nowhere outside it",
  ignore: !haveTestApps || !havePostgres,
  fn: async () => {
    const cluster = await startCluster("gurt", PASSWORD);
    const box = await startAppBox('[egress]\nallow_private_hosts = ["127.0.0.1"]\n');
    try {
      await cluster.sql(
        "CREATE TABLE birds (name text, wingspan_cm int); " +
          "INSERT INTO birds VALUES ('albatross', 340), ('wren', 15);",
      );
      const task = await addPostgresApp(box, cluster);
      const answer = await box.call(task, "pg.query", {
        sql: "SELECT name, wingspan_cm FROM birds ORDER BY name",
      });
      assertEquals(answer.body.ok, true, JSON.stringify(answer.body));
      assert(answer.body.output.isError !== true, JSON.stringify(answer.body));
      const rows = JSON.parse(answer.body.output.content[0].text);
      assertEquals(rows, [
        { name: "albatross", wingspan_cm: 340 },
        { name: "wren", wingspan_cm: 15 },
      ]);

      // While the app runs: its argv holds the URL inside its namespace, and no other process's.
      const { appSpaces, inside, outside } = await processes(
        await uidOf(`box-app-${(await Deno.readTextFile(`${box.home}/apps/pg/instance`)).trim()}`),
      );
      assert(appSpaces.size > 0, "no process of the app's user was found");
      const leaking = outside.filter((p) => p.argv.includes(PASSWORD));
      assertEquals(leaking, [], "the password is in an argv outside the app's pid namespace");
      // The scan reads argv: inside the app's namespace its server holds the URL, as it must.
      assert(inside.some((p) => p.argv.includes(PASSWORD)), JSON.stringify(inside));
      assert(outside.length > inside.length, "the scan saw no process outside the app");

      const results = JSON.stringify(answer.body);
      const journal = await Deno.readTextFile(`${box.home}/tasks/${task}/journal.jsonl`);
      assertStringIncludes(journal, "pg.query");
      const audit = JSON.stringify(await auditRecords(box.home));
      assertStringIncludes(audit, "pg.query");
      const appLog = await Deno.readTextFile(`${box.home}/apps/pg/app.log`).catch(() => "");
      for (const [where, text] of Object.entries({ results, journal, audit, appLog })) {
        assert(!text.includes(PASSWORD), `the password is in the ${where}`);
      }
    } finally {
      await box.close();
      await cluster.close();
    }
  },
});

Deno.test({
  name: "server-postgres as an app: a forward to loopback without allow_private_hosts is refused",
  ignore: !haveTestApps || !havePostgres,
  fn: async () => {
    const cluster = await startCluster("gurt", PASSWORD);
    const box = await startAppBox();
    try {
      const task = await addPostgresApp(box, cluster);
      const answer = await box.call(task, "pg.query", { sql: "SELECT 1" });
      assert(
        answer.body.ok === false || answer.body.output?.isError === true,
        JSON.stringify(answer.body),
      );
      assert(!JSON.stringify(answer.body).includes(PASSWORD));
      const blocked = (await auditRecords(box.home)).map((r) => r.event)
        .filter((event) => event.type === "app_blocked");
      assert(blocked.length > 0, `no app_blocked record: ${JSON.stringify(answer.body)}`);
      assertEquals(
        { app: blocked[0].app, host: blocked[0].host, port: blocked[0].port },
        { app: "pg", host: "127.0.0.1", port: cluster.port },
      );
      assertEquals(blocked[0].reason, "private_address");
    } finally {
      await box.close();
      await cluster.close();
    }
  },
});
