/**
 * @modelcontextprotocol/server-everything as an app, through a task's broker: added from a folder,
 * its tools listed as box tools, called with grants, its environment tool showing that the app
 * holds its declared key and no other vault value, and the task getting that value redacted.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { everythingManifest, haveTestApps, startAppBox } from "./app_kit.ts";

const SECRET = "sk-everything-0123456789abcdef";
const OTHER = "sk-other-key-fedcba9876543210";

Deno.test({
  name: "server-everything as an app: listed, called through the broker, its key redacted",
  ignore: !haveTestApps,
  fn: async () => {
    const box = await startAppBox();
    try {
      await box.setKey("EVERYTHING_TOKEN", SECRET);
      await box.setKey("OTHER_TOKEN", OTHER);
      const source = await box.source(
        "everything",
        everythingManifest({ token: true, extra: ["[tools.get_sum]", "cost_cents = 2"] }),
      );
      const added = await box.add(source, "everything");
      assertEquals(added.status, 200, JSON.stringify(added.body));
      const names = (added.body.app.tool_list as { name: string }[]).map((tool) => tool.name);
      assert(names.includes("everything.echo"), names.join(", "));
      assert(names.includes("everything.get_env"), names.join(", "));
      await box.grant({ tool: "everything.echo" });
      await box.grant({ tool: "everything.get_env" });
      const task = await box.task(["everything.*"]);
      const echoed = await box.call(task, "everything.echo", { message: "hello" });
      assertEquals(echoed.status, 200, JSON.stringify(echoed.body));
      assertStringIncludes(JSON.stringify(echoed.body), "hello");
      const bad = await box.call(task, "everything.echo", { message: 5 });
      assertEquals(bad.body.ok, false);
      assertEquals(
        bad.body.error,
        "Denied: the arguments are not valid for this tool: input/message must be string.",
      );
      const env = await box.call(task, "everything.get_env", {});
      const text = JSON.stringify(env.body);
      assert(!text.includes(SECRET), "the app's key reached the task");
      assertStringIncludes(text, "EVERYTHING_TOKEN");
      assert(!text.includes("OTHER_TOKEN"), "the app was given a key it did not declare");
      assert(!text.includes(OTHER));
    } finally {
      await box.close();
    }
  },
});
