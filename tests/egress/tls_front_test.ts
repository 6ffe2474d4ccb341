/**
 * The box answers a tunnel to a model host itself: the client's TLS is terminated with the box
 * CA's leaf for that host and its requests reach the handler of the task whose proxy carried it.
 * Two tasks' tunnels never cross, and a process that connects to the front's listener itself is
 * refused before any handler sees its request.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { openBoxCa, SYSTEM_ROOTS } from "../../mod/box-ca/mod.ts";
import { openTlsFront, type TlsFront } from "../../mod/egress/mod.ts";
import { startProxy, type TestProxy } from "./egress_kit.ts";
import { caHome, run } from "../box-ca/ca_kit.ts";
import { until } from "../kit/mod.ts";

/** A proxy whose tunnels to api.anthropic.com:443 go to `front`, answered by `name`. */
function taskProxy(front: TlsFront, name: string, seen: string[]): Promise<TestProxy> {
  return startProxy({}, {
    intercept: (host, port) =>
      host === "api.anthropic.com" && port === 443
        ? (client, first) =>
          front.take(client, {
            host,
            first,
            handle: async (request) => {
              const body = await request.text();
              seen.push(`${name} ${request.method} ${new URL(request.url).pathname} ${body}`);
              return Response.json({ task: name, key: request.headers.get("x-api-key") });
            },
          })
        : null,
  });
}

Deno.test("Deno fetch and curl through two tasks' proxies reach https://api.anthropic.com at each task's own handler, trusting only the box CA", async () => {
  const home = await caHome();
  const ca = await openBoxCa(home.ca, { systemRoots: SYSTEM_ROOTS });
  const front = openTlsFront({ leaf: (host) => ca.leaf(host) });
  const seen: string[] = [];
  const one = await taskProxy(front, "one", seen);
  const two = await taskProxy(front, "two", seen);
  const clients = [one, two].map((proxy) =>
    Deno.createHttpClient({
      proxy: { url: `http://127.0.0.1:${proxy.port}` },
      caCerts: [ca.caPem],
    })
  );
  try {
    const answers = await Promise.all(clients.map(async (client, index) => {
      const response = await fetch("https://api.anthropic.com/v1/messages", {
        method: "POST",
        body: `hello ${index}`,
        headers: { "x-api-key": "placeholder" },
        client,
      });
      return await response.json();
    }));
    assertEquals(answers, [{ task: "one", key: "placeholder" }, {
      task: "two",
      key: "placeholder",
    }]);
    const curl = await run("curl", [
      "-sS",
      "--proxy",
      `http://127.0.0.1:${two.port}`,
      "--cacert",
      ca.bundlePath,
      "-d",
      "by curl",
      "https://api.anthropic.com/v1/messages",
    ]);
    assertEquals(curl.code, 0, curl.stderr);
    assertEquals(JSON.parse(curl.stdout).task, "two");
    assertEquals(seen.sort(), [
      "one POST /v1/messages hello 0",
      "two POST /v1/messages by curl",
      "two POST /v1/messages hello 1",
    ]);
    // Without the box CA the client refuses the front's certificate.
    const untrusting = await run("curl", [
      "-sS",
      "--proxy",
      `http://127.0.0.1:${one.port}`,
      "--cacert",
      SYSTEM_ROOTS,
      "https://api.anthropic.com/v1/models",
    ]);
    assertEquals(untrusting.code, 60, untrusting.stderr);
    // The clients' kept connections are tunnels until the clients close them.
    // (curl's own tunnels end with curl, soon after it exits.)
    await until(() => front.tunnels === 2);
    for (const client of clients.splice(0)) client.close();
    await until(() => front.tunnels === 0);
  } finally {
    for (const client of clients) client.close();
    await one.close();
    await two.close();
    await front.close();
    await home.remove();
  }
});

Deno.test("a connection made to the front's listener by anyone but the front is refused, and no handler sees it", async () => {
  const home = await caHome();
  const ca = await openBoxCa(home.ca, { systemRoots: SYSTEM_ROOTS });
  const front = openTlsFront({ leaf: (host) => ca.leaf(host) });
  const seen: string[] = [];
  const proxy = await taskProxy(front, "one", seen);
  const client = Deno.createHttpClient({
    proxy: { url: `http://127.0.0.1:${proxy.port}` },
    caCerts: [ca.caPem],
  });
  try {
    // A first tunnel opens the listener.
    const first = await fetch("https://api.anthropic.com/v1/models", { client });
    assertEquals((await first.json()).task, "one");
    const ports = front.listening().map((entry) => entry.port);
    assertEquals(ports.length, 1);
    // Straight to the listener, with the CA trusted and the right name: refused.
    const direct = await run("curl", [
      "-sS",
      "-i",
      "--cacert",
      ca.bundlePath,
      "--resolve",
      `api.anthropic.com:${ports[0]}:127.0.0.1`,
      `https://api.anthropic.com:${ports[0]}/v1/models`,
    ]);
    assertEquals(direct.code, 0, direct.stderr);
    assertStringIncludes(direct.stdout, " 421");
    assertEquals(seen, ["one GET /v1/models "]);
    assert(!direct.stdout.includes("placeholder"));
  } finally {
    client.close();
    await proxy.close();
    await front.close();
    await home.remove();
  }
});
