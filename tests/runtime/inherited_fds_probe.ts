/**
 * A core that inherited descriptors, for tests/runtime/inherited_fds_test.ts: run as root from a
 * shell that opened fds (without close-on-exec) on a root-only file, as `gurt serve` started by a
 * careless supervisor or test harness would be. It starts the sandbox runtime and runs one shell
 * call under a grant on a folder of the tool owner's: the command lists its own descriptors, reads
 * what each one past 2 holds (through the descriptor itself: a root-only file opened again through
 * /proc would be refused), then waits on a fifo while the host reads the descriptors of every
 * process of the call (bubblewrap's outer process and the command). Prints one JSON line: the
 * call's result and what each process held.
 *
 *   deno run --allow-all inherited_fds_probe.ts
 */
import { processTree, waitFor } from "../kit/mod.ts";
import { ownTree, shellIn, withSandbox } from "./helpers.ts";

await withSandbox({}, async (rt, dir) => {
  const go = `${dir}/go`;
  await new Deno.Command("mkfifo", { args: ["-m", "0600", go] }).output();
  await ownTree(go);
  // ls is a child: its list holds none of the shell's own passing descriptors (a command
  // substitution's pipe, say), and nothing is read but what it listed, by a child bash (dash
  // cannot name a descriptor past 9). The shell then says it is
  // ready and waits in the fifo's open, holding nothing more.
  const script = `ls /proc/$$/fd > /tmp/fds
    ls -l /proc/$$/fd
    while read -r fd; do
      case $fd in 0|1|2) ;; *) echo "fd $fd:"; bash -c 'head -c 200 <&"$1"' read "$fd" 2>&1;; esac
    done < /tmp/fds
    : > ${dir}/ready
    read x < ${go}`;
  const result = rt.run(shellIn(script, [dir]));
  let settled = false;
  result.finally(() => settled = true).catch(() => {});
  const ready = await waitFor(
    async () => settled || (await Deno.stat(`${dir}/ready`).then(() => true, () => false)),
    { ms: 20_000, what: "the shell call to wait on its fifo" },
  );
  const held = ready && !settled ? (await processTree(Deno.pid)).slice(1) : [];
  if (!settled) {
    const writer = await Deno.open(go, { write: true });
    await writer.write(new TextEncoder().encode("go\n"));
    writer.close();
  }
  console.log(JSON.stringify({ result: await result, held }));
});
