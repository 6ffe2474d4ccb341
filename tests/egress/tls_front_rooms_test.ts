/**
 * Rooms in the TLS front: a tunnel with a room is answered on that room's own listener with the
 * room's leaf (a task's own CA, makeTaskCa), never on another room's or the shared one, so a
 * client trusting one task's CA reaches that task's handler and a client trusting another's is
 * refused at the handshake. dropRoom closes the room's listeners once their requests end, and
 * leaves every other listener alone.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { makeTaskCa, openBoxCa, SYSTEM_ROOTS, type TaskCa } from "../../mod/box-ca/mod.ts";
import { parseCertificate } from "../../mod/box-ca/certificates.ts";
import { openTlsFront, type TlsFront } from "../../mod/egress/mod.ts";
import { startProxy, type TestProxy } from "./egress_kit.ts";
import { caHome, run } from "../box-ca/ca_kit.ts";
import { until } from "../kit/mod.ts";

const HOST = "api.github.com";

/**
 * A task's proxy: its tunnels to api.github.com:443 go to `front` in room `room` with `ca`'s
 * leaves, those to api.anthropic.com:443 to the shared listener; each answered as `room`.
 */
function roomProxy(
  front: TlsFront,
  task: { room: string; ca: TaskCa; gate?: Promise<void>; entered?: string[] },
): Promise<TestProxy> {
  const handle = async (request: Request) => {
    task.entered?.push(new URL(request.url).pathname);
    await task.gate;
    return Response.json({ room: task.room, host: new URL(request.url).host });
  };
  return startProxy({}, {
    intercept: (host, port) => {
      if (port !== 443) return null;
      if (host === HOST) {
        return (client, first) =>
          front.take(client, {
            host,
            first,
            handle,
            room: { id: task.room, leaf: (name) => task.ca.leaf(name) },
          });
      }
      if (host === "api.anthropic.com") {
        return (client, first) => front.take(client, { host, first, handle });
      }
      return null;
    },
  });
}

function clientOf(proxy: TestProxy, caPem: string): Deno.HttpClient {
  return Deno.createHttpClient({
    proxy: { url: `http://127.0.0.1:${proxy.port}` },
    caCerts: [caPem],
  });
}

/** The issuer's subject of the certificate a listener on 127.0.0.1:`port` presents for HOST. */
async function issuerAt(port: number): Promise<string> {
  const out = await run("openssl", [
    "s_client",
    "-connect",
    `127.0.0.1:${port}`,
    "-servername",
    HOST,
  ], { stdin: "" });
  const printed = await run("openssl", ["x509", "-noout", "-issuer", "-nameopt", "RFC2253"], {
    stdin: out.stdout,
  });
  assertEquals(printed.code, 0, out.stdout + out.stderr + printed.stderr);
  return printed.stdout.trim().replace(/^issuer=/, "");
}

function subjectOf(caPem: string): string {
  return parseCertificate(caPem).subject;
}

/** Whether something listens on 127.0.0.1:`port`. */
async function listens(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test("two rooms for one host: each task's tunnel is served on its own listener with its own CA's leaf, a client trusting the other task's CA is refused, and the shared listener is not a room's", async () => {
  const home = await caHome();
  const box = await openBoxCa(home.ca, { systemRoots: SYSTEM_ROOTS });
  const front = openTlsFront({ leaf: (host) => box.leaf(host), log: () => {} });
  const a = { room: "task-a", ca: await makeTaskCa([HOST]) };
  const b = { room: "task-b", ca: await makeTaskCa([HOST]) };
  const proxyA = await roomProxy(front, a);
  const proxyB = await roomProxy(front, b);
  const clients: Deno.HttpClient[] = [];
  const client = (proxy: TestProxy, caPem: string) => {
    const made = clientOf(proxy, caPem);
    clients.push(made);
    return made;
  };
  try {
    const fromA = await fetch(`https://${HOST}/user`, { client: client(proxyA, a.ca.caPem) });
    assertEquals(await fromA.json(), { room: "task-a", host: HOST });
    const fromB = await fetch(`https://${HOST}/user`, { client: client(proxyB, b.ca.caPem) });
    assertEquals(await fromB.json(), { room: "task-b", host: HOST });
    const shared = await fetch("https://api.anthropic.com/v1/models", {
      client: client(proxyA, box.caPem),
    });
    assertEquals(await shared.json(), { room: "task-a", host: "api.anthropic.com" });
    // Task A's tunnel, trusting task B's CA (or the box CA): refused at the handshake.
    for (const caPem of [b.ca.caPem, box.caPem]) {
      const refused = await assertRejects(
        () => fetch(`https://${HOST}/user`, { client: client(proxyA, caPem) }),
        TypeError,
      );
      assertStringIncludes(String(refused.cause ?? refused.message), "UnknownIssuer");
    }
    const listening = front.listening().sort((x, y) => (x.room ?? "").localeCompare(y.room ?? ""));
    assertEquals(listening.map(({ host, room }) => ({ host, room })), [
      { host: "api.anthropic.com", room: undefined },
      { host: HOST, room: "task-a" },
      { host: HOST, room: "task-b" },
    ]);
    assertEquals(new Set(listening.map((entry) => entry.port)).size, 3);
    // What each listener presents, by a handshake of its own: the room's CA, the box CA.
    assertEquals(await issuerAt(listening[1].port), subjectOf(a.ca.caPem));
    assertEquals(await issuerAt(listening[2].port), subjectOf(b.ca.caPem));
    assertEquals(await issuerAt(listening[0].port), subjectOf(box.caPem));
    assert(subjectOf(a.ca.caPem) !== subjectOf(b.ca.caPem));
    assertStringIncludes(subjectOf(a.ca.caPem), "gurt task CA");
  } finally {
    for (const made of clients) made.close();
    await proxyA.close();
    await proxyB.close();
    await front.close();
    await home.remove();
  }
});

Deno.test("dropRoom lets a request in flight finish, then closes only that room's listener: the other room and the shared listener go on, and the dropped port takes no more", async () => {
  const home = await caHome();
  const box = await openBoxCa(home.ca, { systemRoots: SYSTEM_ROOTS });
  const front = openTlsFront({ leaf: (host) => box.leaf(host), log: () => {} });
  const gate = Promise.withResolvers<void>();
  const entered: string[] = [];
  const a = { room: "task-a", ca: await makeTaskCa([HOST]), gate: gate.promise, entered };
  const b = { room: "task-b", ca: await makeTaskCa([HOST]) };
  const proxyA = await roomProxy(front, a);
  const proxyB = await roomProxy(front, b);
  const clientA = clientOf(proxyA, a.ca.caPem);
  const clientB = clientOf(proxyB, b.ca.caPem);
  const clientShared = clientOf(proxyB, box.caPem);
  try {
    assertEquals(
      (await (await fetch("https://api.anthropic.com/", { client: clientShared })).json()).room,
      "task-b",
    );
    assertEquals(
      (await (await fetch(`https://${HOST}/`, { client: clientB })).json()).room,
      "task-b",
    );
    const held = fetch(`https://${HOST}/held`, { client: clientA });
    await until(() => front.listening().some((entry) => entry.room === "task-a"));
    const portA = front.listening().find((entry) => entry.room === "task-a")!.port;
    await until(() => entered.includes("/held")); // its handler has it: it is in flight
    assertEquals(front.tunnels, 3);

    front.dropRoom("task-a");
    assertEquals(
      front.listening().map(({ host, room }) => `${room ?? "shared"} ${host}`).sort(),
      [`shared api.anthropic.com`, `task-b ${HOST}`],
    );
    gate.resolve();
    const answer = await held;
    assertEquals([answer.status, (await answer.json()).room], [200, "task-a"]);
    await until(async () => !(await listens(portA)), 5000);
    await until(() => front.tunnels === 2);
    // The other room and the shared listener still answer, on the same ports as before.
    const before = front.listening();
    assertEquals(
      (await (await fetch(`https://${HOST}/`, { client: clientB })).json()).room,
      "task-b",
    );
    assertEquals(
      (await (await fetch("https://api.anthropic.com/", { client: clientShared })).json()).room,
      "task-b",
    );
    assertEquals(front.listening(), before);
  } finally {
    gate.resolve();
    clientA.close();
    clientB.close();
    clientShared.close();
    await proxyA.close();
    await proxyB.close();
    await front.close();
    await home.remove();
  }
});
