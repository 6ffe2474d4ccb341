/**
 * A task that floods its doors cannot stop the core: a real `gurt serve`, a flood of idle
 * connections from another process to one task's broker socket. Past the door's cap the extra
 * connections are answered 503 and closed, said once in the log, while another task's calls and
 * the admin socket go on; under a low open-files limit (prlimit) the core runs out of descriptors,
 * says so once, keeps serving the connections it has, and takes new ones once the flood ends.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { requestJson } from "../../mod/net/mod.ts";
import { startServe, startTask, taskSocket, waitFor, withHome } from "../kit/mod.ts";

const FLOOD_CLIENT = new URL("./flood_client.ts", import.meta.url).pathname;

/** The flood as its own process: `count` idle connections to `socket`, held until stop(). */
async function flood(socket: string, count: number): Promise<{
  opened: number;
  closed: () => string[];
  stop: () => Promise<void>;
}> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", FLOOD_CLIENT, socket, String(count)],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines: string[] = [];
  const opened = Promise.withResolvers<number>();
  (async () => {
    let text = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      let end: number;
      while ((end = text.indexOf("\n")) !== -1) {
        const line = text.slice(0, end);
        text = text.slice(end + 1);
        if (line.startsWith("opened ")) opened.resolve(Number(line.slice(7)));
        else lines.push(line);
      }
    }
    opened.resolve(-1);
  })();
  return {
    opened: await opened.promise,
    closed: () => lines.filter((line) => line.startsWith("closed ")),
    async stop() {
      await child.stdin.close();
      await child.status;
    },
  };
}

/** A raw request on a connection the test holds open (Connection: keep-alive). */
async function onConnection(conn: Deno.Conn, path: string): Promise<string> {
  await conn.write(
    new TextEncoder().encode(
      `GET ${path} HTTP/1.1\r\nhost: gurt\r\nconnection: keep-alive\r\n\r\n`,
    ),
  );
  const buffer = new Uint8Array(4096);
  const read = await conn.read(buffer);
  return read === null ? "" : new TextDecoder().decode(buffer.subarray(0, read));
}

Deno.test("thousands of idle connections to one task's broker socket: past its cap they are refused 503, said once, and another task and the admin socket are served", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(`${home}/gurt.toml`, "[broker]\ndoor_connections = 50\n");
    const serve = await startServe(home);
    assertEquals(serve.exited, null, serve.stderr());
    let attack: Awaited<ReturnType<typeof flood>> | null = null;
    try {
      const flooder = await startTask(serve, { tools: ["example.echo"] });
      const other = await startTask(serve, { tools: ["example.echo"] });
      attack = await flood(taskSocket(home, flooder), 2000);
      assertEquals(attack.opened, 2000);
      const flooded = attack;
      await waitFor(() => flooded.closed().length >= 1950, {
        what: "the extra connections closed",
        ms: 30_000,
      });
      assert(flooded.closed().length <= 1950, `${flooded.closed().length} closed, of 2000`);
      assertStringIncludes(flooded.closed()[0], "503 Service Unavailable");
      assertStringIncludes(flooded.closed()[0], "see runbook.md#door-busy");
      // Another task's calls and the owner's socket are served while the 50 are held.
      const call = await requestJson(taskSocket(home, other), {
        method: "POST",
        path: "/call",
        body: { tool: "example.echo", input: { text: "still here" }, key: "k1" },
      });
      assertEquals(call.status, 200, JSON.stringify(call.body));
      assertEquals(
        (await requestJson(adminSocketPath(home), { method: "GET", path: "/tasks" })).status,
        200,
      );
      const said = serve.stderr().split("\n").filter((line) =>
        line.includes("runbook.md#door-busy")
      );
      assertEquals(said.length, 1, serve.stderr());
      assertStringIncludes(
        said[0],
        `task ${flooder}'s broker socket already has 50 connections open`,
      );
    } finally {
      await attack?.stop();
      assertEquals((await serve.stop()).code, 0, serve.stderr());
    }
  }, { prefix: "gurt-flood-" });
});

Deno.test("a core out of file descriptors says so once, keeps serving the connections it has, and takes new ones once the flood ends", async () => {
  await withHome(async (home) => {
    // No cap that would hold the flood: only the descriptors run out.
    await Deno.writeTextFile(`${home}/gurt.toml`, "[broker]\ndoor_connections = 65536\n");
    const serve = await startServe(home, { wrap: ["prlimit", "--nofile=400"] });
    assertEquals(serve.exited, null, serve.stderr());
    let attack: Awaited<ReturnType<typeof flood>> | null = null;
    let held: Deno.Conn | null = null;
    try {
      const flooder = await startTask(serve, { tools: ["example.echo"] });
      const other = await startTask(serve, { tools: ["example.echo"] });
      held = await Deno.connect({ transport: "unix", path: taskSocket(home, other) });
      assertStringIncludes(await onConnection(held, "/task"), "200 OK");
      attack = await flood(taskSocket(home, flooder), 800);
      await waitFor(() => serve.stderr().includes("run out of file descriptors"), {
        what: "the core to say it ran out of descriptors",
        ms: 30_000,
      });
      // The connection it already has is served while no new one can be accepted.
      assertStringIncludes(await onConnection(held, "/task"), "200 OK");
      await attack.stop();
      attack = null;
      const admin = await requestJson(adminSocketPath(home), { method: "GET", path: "/tasks" });
      assertEquals(admin.status, 200);
      const lines = serve.stderr().split("\n");
      assertEquals(lines.filter((line) => line.includes("run out of file descriptors")).length, 1);
      assertEquals(lines.filter((line) => line.includes("accepts connections again")).length, 1);
    } finally {
      held?.close();
      await attack?.stop();
      const status = await serve.stop();
      assertEquals(status.code, 0, serve.stderr());
    }
  }, { prefix: "gurt-nofile-" });
});

// Deno raises its soft open-files limit to the hard one when it starts (its CLI does, before any
// code runs), so the core needs no setrlimit of its own: no ffi, no prlimit. This holds it to that.
Deno.test("gurt serve runs with its soft open-files limit raised to its hard one", async () => {
  await withHome(async (home) => {
    const serve = await startServe(home, { wrap: ["prlimit", "--nofile=300:4096"] });
    try {
      assertEquals(serve.exited, null, serve.stderr());
      const limits = await Deno.readTextFile(`/proc/${serve.child.pid}/limits`);
      assert(/Max open files\s+4096\s+4096/.test(limits), limits);
    } finally {
      await serve.stop();
    }
  }, { prefix: "gurt-nofile-" });
});
