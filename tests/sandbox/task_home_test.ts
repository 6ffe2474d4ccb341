/**
 * A task's home has a size (`[tasks] home_bytes`, mod/sandbox/task_home.ts): a real `gurt serve`
 * as root mounts each task's home from an ext4 image of that size. A task that fills its home gets
 * ENOSPC inside while other tasks' calls and the audit log go on; the home's files outlive a restart
 * of the core; a task whose home the box home's disk could not hold, with the audit log's reserve,
 * is refused before anything of it is made.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { verifyHome } from "../../mod/audit/mod.ts";
import { mountPoints } from "../../mod/sandbox/mod.ts";
import {
  exists,
  grant,
  type ServeProcess,
  startServe,
  startTask,
  stopAllTasks,
  taskRequest,
  until,
} from "../kit/mod.ts";

const asRoot = Deno.uid() === 0;
const MB = 1024 * 1024;

/** A home with `[tasks] home_bytes` and a grant of example.echo, its core started. */
async function serveWith(homeBytes: number): Promise<{ home: string; serve: ServeProcess }> {
  const home = await Deno.makeTempDir({ prefix: "gurt-task-home-" });
  await Deno.mkdir(`${home}/grants`);
  await Deno.writeTextFile(`${home}/grants/echo.toml`, grant({ tool: "example.echo" }));
  await Deno.writeTextFile(
    `${home}/gurt.toml`,
    `[tasks]\nhome_bytes = ${homeBytes}\n[portal]\nlisten = "127.0.0.1:0"\n`,
  );
  const serve = await startServe(home);
  assertEquals(serve.exited, null, serve.stderr());
  return { home, serve };
}

async function close(home: string, serve: ServeProcess): Promise<void> {
  if (serve.exited === null) {
    await stopAllTasks(serve);
    await serve.stop();
  }
  await Deno.remove(home, { recursive: true });
}

async function stateOf(serve: ServeProcess, id: string): Promise<string> {
  return (await serve.admin("GET", `/tasks/${id}`)).body.task.state as string;
}

Deno.test({
  name:
    "a task that writes past its home's size gets ENOSPC inside; another task's calls and the audit log go on",
  ignore: !asRoot,
  fn: async () => {
    const { home, serve } = await serveWith(32 * MB);
    try {
      const filler = await startTask(serve, {
        tools: ["example.echo"],
        worker: {
          kind: "cmd",
          command: ["/bin/sh", "-c", "dd if=/dev/zero of=fill bs=1M count=96 2>&1; echo status=$?"],
        },
      });
      await until(async () => (await stateOf(serve, filler)) === "done", 30_000);
      const log = await Deno.readTextFile(`${home}/tasks/${filler}/worker.log`);
      assertStringIncludes(log, "No space left on device");
      assert(!log.includes("status=0"), log);
      const image = await Deno.stat(`${home}/tasks/${filler}/home.img`);
      assert(image.blocks! * 512 <= 40 * MB, `the image took ${image.blocks! * 512} bytes`);
      const other = await startTask(serve, { tools: ["example.echo"] });
      const call = await taskRequest(home, other, {
        method: "POST",
        path: "/call",
        body: { tool: "example.echo", input: { text: "still here" }, key: "k1" },
      });
      assertEquals(call.body.ok, true, JSON.stringify(call.body));
      assertEquals((await verifyHome(home)).failure, null);
    } finally {
      await close(home, serve);
    }
  },
});

Deno.test({
  name: "a home is [tasks] home_bytes big, and its files outlive a restart of the core",
  ignore: !asRoot,
  fn: async () => {
    let { home, serve } = await serveWith(48 * MB);
    try {
      const id = await startTask(serve, {
        tools: ["example.echo"],
        worker: {
          kind: "cmd",
          command: [
            "/bin/sh",
            "-c",
            "df -k . | tail -1 > size.txt; echo kept > kept.txt; sleep 300",
          ],
        },
      });
      const kept = `${home}/tasks/${id}/home/kept.txt`;
      await until(() => exists(kept), 30_000);
      const kilobytes = Number(
        (await Deno.readTextFile(`${home}/tasks/${id}/home/size.txt`))
          .trim().split(/\s+/)[1],
      );
      assert(kilobytes > 32 * 1024 && kilobytes <= 48 * 1024, `the home is ${kilobytes} kB`);
      await serve.stop();
      assert(!(await mountPoints()).includes(`${home}/tasks/${id}/home`), "unmounted at stop");
      assert(!(await exists(kept)), "the file is in the image, not on the box home's disk");
      serve = await startServe(home);
      assertEquals(serve.exited, null, serve.stderr());
      await until(() => exists(kept), 30_000);
      assertEquals(await Deno.readTextFile(kept), "kept\n");
    } finally {
      await close(home, serve);
    }
  },
});

Deno.test({
  name:
    "a task whose home would leave the audit log less than its reserve is refused, and nothing of it is made",
  ignore: !asRoot,
  fn: async () => {
    const { home, serve } = await serveWith(1024 * 1024 * MB * 1024); // 1 PiB
    try {
      const answer = await serve.admin("POST", "/tasks", {
        worker: { kind: "none" },
        tools: ["example.echo"],
        budgetCents: null,
      });
      assertEquals(answer.status, 507, JSON.stringify(answer.body));
      const error = answer.body.error as string;
      assertStringIncludes(error, "[tasks] home_bytes");
      assert(error.endsWith("see runbook.md#task-home-no-room"), error);
      assertEquals([...Deno.readDirSync(`${home}/tasks`)], []);
    } finally {
      await close(home, serve);
    }
  },
});
