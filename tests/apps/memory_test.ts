/**
 * @modelcontextprotocol/server-memory as an app: its knowledge graph file in the app's home (its
 * MEMORY_FILE_PATH from the manifest's [env], `{HOME}` standing for the home), entities created
 * through one task's broker, `gurt serve` restarted, and the entities read back by a new task.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { haveTestApps, MEMORY, startAppBox } from "./app_kit.ts";

Deno.test({
  name: "server-memory as an app: its graph kept in apps/<name>/home across a restart of serve",
  ignore: !haveTestApps,
  fn: async () => {
    const box = await startAppBox();
    try {
      const source = await box.source(
        "memory",
        [
          'kind = "mcp"',
          `command = ["node", ${JSON.stringify(MEMORY)}]`,
          "[env]",
          'MEMORY_FILE_PATH = "{HOME}/graph.jsonl"',
          "",
        ].join("\n"),
      );
      const added = await box.add(source, "memory");
      assertEquals(added.status, 200, JSON.stringify(added.body));
      for (const verb of ["create_entities", "read_graph", "search_nodes"]) {
        await box.grant({ tool: `memory.${verb}` });
      }
      const first = await box.task(["memory.*"]);
      const created = await box.call(first, "memory.create_entities", {
        entities: [{
          name: "Ada_Lovelace",
          entityType: "person",
          observations: ["wrote the first program for the Analytical Engine"],
        }],
      });
      assertEquals(created.body.ok, true, JSON.stringify(created.body));
      assert(created.body.output.isError !== true, JSON.stringify(created.body));
      const file = `${box.home}/apps/memory/home/graph.jsonl`;
      assertStringIncludes(await Deno.readTextFile(file), "Ada_Lovelace");

      await box.restart();
      const second = await box.task(["memory.*"]);
      const found = await box.call(second, "memory.search_nodes", { query: "Analytical" });
      assertEquals(found.body.ok, true, JSON.stringify(found.body));
      assert(found.body.output.isError !== true, JSON.stringify(found.body));
      assertStringIncludes(JSON.stringify(found.body), "Ada_Lovelace");
      const graph = await box.call(second, "memory.read_graph", {});
      const text = JSON.stringify(graph.body);
      assertStringIncludes(text, "wrote the first program for the Analytical Engine");
      // Nothing went to the server's default file beside its code.
      const beside = `${MEMORY.slice(0, MEMORY.lastIndexOf("/"))}/memory.jsonl`;
      assert(!(await Deno.stat(beside).then(() => true, () => false)), `${beside} was written`);
    } finally {
      await box.close();
    }
  },
});
