/**
 * Bad servers and bad input at `gurt app add` (POST /apps), against the hostile server's bad tool
 * lists: names that make no box verb, two names that make the same one, a schema Ajv cannot
 * compile are left out with a reason (GET /apps/:name, GET /apps/check) while the rest is offered;
 * 1001 tools, a broken answer to initialize, or a manifest with an unknown key refuse the add
 * whole: no folder in apps/, no app listed, and no app_added record left standing.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { auditRecords, type Json } from "../kit/mod.ts";
import { type AppBox, startAppBox } from "./app_kit.ts";
import { hostileSource } from "./hostile_kit.ts";
import { readAppFolder } from "../../mod/apps/mod.ts";

const ready = Deno.uid() === 0 && await Deno.stat("/usr/bin/node").then(() => true, () => false);

async function withBox(fn: (box: AppBox) => Promise<void>): Promise<void> {
  const box = await startAppBox();
  try {
    await fn(box);
  } finally {
    await box.close();
  }
}

async function addList(box: AppBox, list: string): Promise<{ status: number; body: Json }> {
  const source = await hostileSource(box, "evil", { list });
  return await box.add(source.folder, "evil");
}

function leftOut(app: Json): Record<string, string> {
  return Object.fromEntries(
    (app.left_out as { server_name: string; problem: string }[]).map((left) => [
      left.server_name,
      left.problem,
    ]),
  );
}

function offered(app: Json): string[] {
  return (app.tool_list as { name: string }[]).map((tool) => tool.name);
}

/** What a refused add must leave: nothing in apps/, no app, every app_added taken back. */
async function nothingInstalled(box: AppBox): Promise<void> {
  const left: string[] = [];
  try {
    for await (const entry of Deno.readDir(`${box.home}/apps`)) left.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  assertEquals(left, [], "apps/ keeps something of a refused add");
  const listed = await box.admin("GET", "/apps");
  assertEquals(listed.body.apps, []);
  const shown = await box.admin("GET", "/apps/evil");
  assertEquals(shown.status, 404);
  const events = (await auditRecords(box.home)).map((record) => record.event);
  const added = events.filter((event) => event.type === "app_added" && event.app === "evil");
  const removed = events.filter((event) => event.type === "app_removed" && event.app === "evil");
  assertEquals(
    removed.map((event) => event.manifest_sha256),
    added.map((event) => event.manifest_sha256),
    "an app_added record stands for an app that is not there",
  );
}

Deno.test({
  name:
    "tools whose names make no box verb, that collide in snake case, or whose schema does not compile are left out with a reason",
  ignore: !ready,
  fn: () =>
    withBox(async (box) => {
      const names = await addList(box, "badnames");
      assertEquals(names.status, 200, JSON.stringify(names.body));
      assertEquals(offered(names.body.app), ["evil.a_b_c", "evil.fine"]);
      const nameProblems = leftOut(names.body.app);
      assertEquals(Object.keys(nameProblems).sort(), ["-dash", "9lives", "x".repeat(70)].sort());
      for (const problem of Object.values(nameProblems)) {
        assertStringIncludes(problem, "its name makes no box tool name");
      }
      const checked = await box.admin("GET", "/apps/check");
      const problems = (checked.body.problems as { app: string; problem: string }[])
        .filter((p) => p.app === "evil").map((p) => p.problem);
      assertEquals(problems.length, 3, JSON.stringify(checked.body));
      assert(problems.some((p) => p.startsWith('tool "9lives": ')), problems.join("\n"));
      assertEquals((await box.admin("DELETE", "/apps/evil")).status, 200);

      const dups = await addList(box, "dups");
      assertEquals(dups.status, 200, JSON.stringify(dups.body));
      assertEquals(offered(dups.body.app), ["evil.fine"]);
      const dupProblems = leftOut(dups.body.app);
      assertEquals(Object.keys(dupProblems).sort(), ["get-env", "getEnv"]);
      for (const problem of Object.values(dupProblems)) {
        assertStringIncludes(problem, '"get-env" and "getEnv" are both evil.get_env');
      }
      assertEquals((await box.admin("DELETE", "/apps/evil")).status, 200);

      const schema = await addList(box, "badschema");
      assertEquals(schema.status, 200, JSON.stringify(schema.body));
      assertEquals(offered(schema.body.app), ["evil.fine"]);
      const shown = await box.admin("GET", "/apps/evil");
      assertStringIncludes(leftOut(shown.body.app).broken, "its input schema does not compile");
      // A task cannot be given a tool that was left out.
      const task = await box.admin("POST", "/tasks", {
        worker: { kind: "none" },
        tools: ["evil.broken"],
        budgetCents: null,
      });
      assert(task.status !== 200, JSON.stringify(task.body));
    }),
});

Deno.test({
  name: "a server listing 1001 tools is refused whole: nothing half-installed",
  ignore: !ready,
  fn: () =>
    withBox(async (box) => {
      const many = await addList(box, "many");
      assertEquals(many.status, 400, JSON.stringify(many.body));
      assertEquals(many.body.code, "app_failed");
      assertStringIncludes(many.body.error, "the app evil was not added");
      assertStringIncludes(many.body.error, "1001 tools, more than 1000");
      await nothingInstalled(box);
    }),
});

Deno.test({
  name: "a server that answers initialize with broken JSON-RPC is refused with a clear error",
  ignore: !ready,
  fn: () =>
    withBox(async (box) => {
      const garbage = await addList(box, "garbage");
      assertEquals(garbage.status, 400, JSON.stringify(garbage.body));
      assertEquals(garbage.body.code, "app_failed");
      assertStringIncludes(garbage.body.error, "not an MCP message");
      await nothingInstalled(box);
    }),
});

Deno.test({
  name: "a manifest with an unknown key is refused with its file and line, and changes nothing",
  ignore: !ready,
  fn: () =>
    withBox(async (box) => {
      const source = await hostileSource(box, "evil", { extra: ["", "colour = 1"] });
      const added = await box.add(source.folder, "evil");
      assertEquals(added.status, 400, JSON.stringify(added.body));
      assertEquals(added.body.code, "app_invalid");
      assertStringIncludes(added.body.error, "app.toml:4");
      assertStringIncludes(added.body.error, "colour");
      await nothingInstalled(box);
      const events = (await auditRecords(box.home)).map((record) => record.event.type);
      assert(!events.includes("app_added"), events.join(", "));
    }),
});

Deno.test({
  name:
    "a folder that sends a file the box keeps there itself (home.img, passwd, tools.json) is refused, and changes nothing",
  ignore: !ready,
  fn: () =>
    withBox(async (box) => {
      const source = await hostileSource(box, "evil");
      const files = await readAppFolder(source.folder);
      for (const name of ["home.img", "passwd", "tools.json"]) {
        const added = await box.admin("POST", "/apps", {
          name: "evil",
          files: [...files, { path: name, executable: false, data: btoa("not the box's") }],
        });
        assertEquals(added.status, 400, `${name}: ${JSON.stringify(added.body)}`);
        assertEquals(added.body.code, "app_invalid");
        assertStringIncludes(added.body.error, `"${name}" is not a path an app's folder may hold`);
        await nothingInstalled(box);
      }
    }),
});
