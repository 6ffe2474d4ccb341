/**
 * The sockets: their modes (task socket 0600, the admin folder 0700 whether made or found), each
 * socket refusing the other's requests, and, as root, one task's user unable to open another's.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { startBox, startServe, withBox, withHome } from "../kit/mod.ts";

function mode(path: string): number {
  return Deno.statSync(path).mode! & 0o777;
}

Deno.test("a task socket is 0600 in a 0700 folder, and the admin folder made at start is 0700", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    assertEquals(mode(task.socket), 0o600);
    assertEquals(mode(`${box.home}/tasks/${task.id}`), 0o700);
    assertEquals(mode(`${box.home}/run/owner-broker`), 0o700);
    assertEquals(mode(adminSocketPath(box.home)), 0o600);
  });
});

Deno.test("an admin folder found at 0755 is made 0700 before the admin socket is bound", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/run/owner-broker`, { recursive: true });
    await Deno.chmod(`${home}/run/owner-broker`, 0o755);
    assertEquals(mode(`${home}/run/owner-broker`), 0o755);
    const serve = await startServe(home);
    try {
      assertEquals(serve.exited, null, serve.stderr());
      assertEquals(mode(`${home}/run/owner-broker`), 0o700);
      assertEquals(mode(adminSocketPath(home)), 0o600);
    } finally {
      assertEquals((await serve.stop()).code, 0);
    }
  }, { prefix: "gurt-modes-" });
});

const OWNER_REQUESTS: [string, string][] = [
  ["GET", "/approvals"],
  ["POST", "/approvals/1/approve"],
  ["POST", "/approvals/1/refuse"],
  ["GET", "/grants/check"],
  ["GET", "/tasks"],
  ["POST", "/tasks"],
  ["GET", "/tasks/abc"],
  ["POST", "/tasks/abc/stop"],
  ["GET", "/vault"],
  ["GET", "/audit"],
];

const TASK_REQUESTS: [string, string][] = [
  ["GET", "/task"],
  ["GET", "/tools"],
  ["POST", "/step"],
  ["POST", "/call"],
  ["POST", "/ask"],
  ["POST", "/cost"],
  ["POST", "/usage"],
];

Deno.test("the task socket refuses every owner request and the admin socket every task request: 403 forbidden, nothing audited", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const before = (await box.records()).length;
    const sockets = [
      { socket: "task", send: task.request, requests: OWNER_REQUESTS },
      { socket: "admin", send: box.admin, requests: TASK_REQUESTS },
    ];
    for (const { socket, send, requests } of sockets) {
      for (const [method, path] of requests) {
        const body = method === "POST" ? {} : undefined;
        const answer = await send(method as "GET" | "POST", path, body);
        assertEquals(answer.status, 403, `${method} ${path} on the ${socket} socket`);
        assertEquals(answer.body.code, "forbidden");
        assertStringIncludes(answer.body.error, "see runbook.md#socket-forbidden");
      }
    }
    assertEquals((await box.records()).length, before);
    assert(box.logs.filter((l) => l.includes("socket-forbidden")).length >= 17);
  });
});

/** Tries to connect to `socket` as `uid`, in a separate process; "connected" or the error code. */
async function connectAs(uid: number, gid: number, socket: string, dir: string): Promise<string> {
  const code = `try { (await Deno.connect({ transport: "unix", path: ${
    JSON.stringify(socket)
  } })).close(); console.log("connected"); } catch (e) { console.log(e.code ?? e.name); }`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    uid,
    gid,
    env: { DENO_DIR: dir, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim() || new TextDecoder().decode(out.stderr);
}

Deno.test({
  name: "as root, each task's user opens its own socket and gets EACCES on another task's",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startBox({ core: { asRoot: true } });
    const denoDir = await Deno.makeTempDir({ prefix: "gurt-deno-dir-" });
    try {
      await Deno.chmod(denoDir, 0o777);
      // The temporary home was made 0700: the core lets task users pass through it.
      assertEquals(mode(box.home) & 0o001, 0o001);
      const a = await box.startTask();
      const b = await box.startTask();
      const users = (await box.admin("GET", "/tasks")).body.tasks;
      assertEquals(users.length, 2);
      const ownerOf = (socket: string) => Deno.statSync(socket);
      const userA = ownerOf(a.socket);
      const userB = ownerOf(b.socket);
      assert(userA.uid !== 0 && userB.uid !== 0 && userA.uid !== userB.uid);
      assertEquals(await connectAs(userA.uid!, userA.gid!, a.socket, denoDir), "connected");
      assertEquals(await connectAs(userB.uid!, userB.gid!, b.socket, denoDir), "connected");
      assertEquals(await connectAs(userA.uid!, userA.gid!, b.socket, denoDir), "EACCES");
      assertEquals(await connectAs(userB.uid!, userB.gid!, a.socket, denoDir), "EACCES");
      for (const task of [a, b]) await box.admin("POST", `/tasks/${task.id}/stop`);
      const passwd = await Deno.readTextFile("/etc/passwd");
      assert(!passwd.includes(`box-${a.id}:`) && !passwd.includes(`box-${b.id}:`));
    } finally {
      await box.close();
      await Deno.remove(denoDir, { recursive: true });
    }
  },
});
