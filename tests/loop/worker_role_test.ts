/** The loop's worker role reaches the model only through the core: no host is open to it. */
import { assertEquals } from "../assert.ts";
import { ROLE_TABLE, runRole } from "../../mod/roles/mod.ts";
import { startFakeModel } from "./fake_model.ts";

const probe = new URL("./net_probe.ts", import.meta.url);

Deno.test("the worker and relay roles cannot reach the model service that the core relays to", async () => {
  const model = startFakeModel([]);
  try {
    const url = `${model.url}/v1/messages`;
    // The test itself can: the service is up and answers.
    const direct = await fetch(url, { method: "POST", body: "{}" });
    await direct.body?.cancel();
    assertEquals(direct.status, 200);
    const socket = "/tmp/gurt-no-such-task/broker.sock";
    for (
      const [role, permissions] of [
        ["worker", ROLE_TABLE.loop.permissions({ socket })],
        ["relay", ROLE_TABLE.mcp.permissions({ socket })],
      ] as const
    ) {
      assertEquals(await runRole({ role, permissions, entry: probe, args: { url } }), 13, role);
    }
  } finally {
    await model.close();
  }
});
