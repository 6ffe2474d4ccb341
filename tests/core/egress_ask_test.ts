/**
 * `[egress] unknown = "ask"`: a host on no list becomes an owner approval, the request held
 * meanwhile. Approved, the request goes on and the host joins the task's list; refused, the task
 * gets the proxy's 403 and a net_blocked record.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Json, startBox, startScriptTask, taskEnd, until } from "../kit/mod.ts";

Deno.test({
  name:
    "a host on no list is asked of the owner: approved, the held request goes on and the host joins the task's list",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (request) => new Response(`reached ${new URL(request.url).pathname}`),
    );
    const port = server.addr.port;
    const box = await startBox({
      core: { asRoot: true },
      toml: `[egress]
unknown = "ask"
resolve = { "asked.test" = "127.0.0.1", "refused.test" = "127.0.0.1" }
allow_private_hosts = ["asked.test", "refused.test"]
`,
    });
    try {
      const proxy = `--noproxy '' -x "$HTTP_PROXY"`;
      const { id, home } = await startScriptTask(
        box,
        `curl -s ${proxy} http://asked.test:${port}/first > first.txt
             curl -s ${proxy} http://asked.test:${port}/second > second.txt
             curl -s ${proxy} -w ' %{http_code}' http://refused.test:${port}/ > refused.txt`,
      );

      const pending = async (host: string) => {
        let item: Json = null;
        await until(async () => {
          const items = (await box.admin("GET", "/approvals")).body.items as Json[];
          item = items.find((i) => JSON.stringify(i).includes(host)) ?? null;
          return item !== null;
        }, 30_000);
        return item;
      };
      const asked = await pending(`asked.test:${port}`);
      assertStringIncludes(JSON.stringify(asked), `allow asked.test:${port} for task ${id}?`);
      assertEquals(await Deno.stat(`${home}/first.txt`).then((i) => i.size), 0, "held");
      const approved = await box.admin("POST", `/approvals/${asked.approval}/approve`);
      assertEquals(approved.status, 200, JSON.stringify(approved.body));

      const refused = await pending("refused.test");
      assertEquals((await box.admin("POST", `/approvals/${refused.approval}/refuse`)).status, 200);
      const { task } = await taskEnd(box, id, 30_000);
      assertEquals(await Deno.readTextFile(`${home}/first.txt`), "reached /first");
      // The second request to the same place was not asked again: the host is on the list now.
      assertEquals(await Deno.readTextFile(`${home}/second.txt`), "reached /second");
      assertEquals(task.hosts, [`asked.test:${port}`]);
      assert((await Deno.readTextFile(`${home}/refused.txt`)).endsWith(" 403"));
      const blocked = (await box.records()).map((r) => r.event).filter((e) =>
        e.type === "net_blocked"
      );
      assertEquals(blocked.map((e) => e.host), ["refused.test"]);
    } finally {
      await box.close();
      await server.shutdown();
    }
  },
});
