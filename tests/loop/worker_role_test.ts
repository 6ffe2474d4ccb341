/**
 * The loop's worker role reaches the model only through its task's model endpoint: the one
 * `host:port` it is given, never the model service the endpoint relays to.
 */
import { assertEquals } from "../assert.ts";
import { ROLE_TABLE, runRole } from "../../mod/roles/mod.ts";
import { startFakeModel } from "./fake_model.ts";

const probe = new URL("./net_probe.ts", import.meta.url);

Deno.test("the worker role reaches its task's model endpoint and no other host; the relay role reaches neither", async () => {
  const model = startFakeModel([]);
  // Stands for the task's model endpoint, which the task init opens on its loopback.
  const endpoint = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("endpoint"),
  );
  try {
    const url = `${model.url}/v1/messages`;
    const endpointUrl = `http://127.0.0.1:${endpoint.addr.port}/v1/messages`;
    // The test itself can: the service is up and answers.
    const direct = await fetch(url, { method: "POST", body: "{}" });
    await direct.body?.cancel();
    assertEquals(direct.status, 200);
    const socket = "/tmp/gurt-no-such-task/broker.sock";
    const worker = ROLE_TABLE.loop.permissions({
      socket,
      modelEndpoints: [`127.0.0.1:${endpoint.addr.port}`],
    });
    const relay = ROLE_TABLE.mcp.permissions({ socket });
    const run = (role: "worker" | "relay", permissions: typeof worker, target: string) =>
      runRole({ role, permissions, entry: probe, args: { url: target } });
    assertEquals(await run("worker", worker, endpointUrl), 0, "worker to its endpoint");
    assertEquals(await run("worker", worker, url), 13, "worker to the service");
    assertEquals(await run("relay", relay, endpointUrl), 13, "relay to the endpoint");
    assertEquals(await run("relay", relay, url), 13, "relay to the service");
  } finally {
    await model.close();
    await endpoint.shutdown();
  }
});
