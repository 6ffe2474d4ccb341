/**
 * A task's worker, started by a core running as root, holds nothing of root's: its own uid and gid,
 * no supplementary group, no capability in any set, and no_new_privs, so even a setuid-root program
 * (one the owner left on the box, say) runs as the task's user when the task runs it.
 */
import { assert, assertEquals } from "../assert.ts";
import { until, withBox } from "../kit/mod.ts";

Deno.test({
  name:
    "as root, a worker runs with no_new_privs, no group and no capability, and a setuid-root program it runs gains it nothing",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    await withBox({ core: { asRoot: true } }, async (box) => {
      const answer = await box.admin("POST", "/tasks", {
        worker: {
          kind: "cmd",
          command: [
            "sh",
            "-c",
            // The task sees no host folder but its home: root puts the setuid-root program there.
            "while [ ! -e go ]; do sleep 0.05; done; " +
            `grep -E '^(Uid|Gid|Groups|NoNewPrivs|Cap[A-Za-z]+):' /proc/self/status > status.txt; ./rootid > id.txt; exec sleep 300`,
          ],
        },
        tools: ["example.echo"],
        budgetCents: null,
      });
      assertEquals(answer.status, 200, JSON.stringify(answer.body));
      const task = answer.body.task;
      const home = `${box.home}/tasks/${task.id}/home`;
      await Deno.copyFile("/usr/bin/id", `${home}/rootid`);
      await Deno.chown(`${home}/rootid`, 0, 0);
      await Deno.chmod(`${home}/rootid`, 0o4755);
      await Deno.writeTextFile(`${home}/go`, "");
      await until(async () => (await Deno.readTextFile(`${home}/id.txt`).catch(() => "")) !== "");
      const status = await Deno.readTextFile(`${home}/status.txt`);
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
      assert(uid !== 0, status);
      assertEquals(/^Uid:\s+(.*)$/m.exec(status)![1].split(/\s+/).map(Number), Array(4).fill(uid));
      assertEquals(/^Groups:[ \t]*(.*)$/m.exec(status)![1].trim(), "", status);
      assertEquals(/^NoNewPrivs:\s+(\d)/m.exec(status)![1], "1", status);
      for (const set of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]) {
        assertEquals(new RegExp(`^${set}:\\s+(\\w+)`, "m").exec(status)![1], "0".repeat(16), set);
      }
      const id = await Deno.readTextFile(`${home}/id.txt`);
      assert(id.startsWith(`uid=${uid}(`) && !id.includes("euid"), id);
      await box.admin("POST", `/tasks/${task.id}/stop`);
    });
  },
});
