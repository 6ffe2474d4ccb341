/**
 * A core that inherited descriptors, for tests/sandbox/inherited_fds_test.ts: run as root from a
 * shell that opened fds (without close-on-exec) to a secret-marked file, as `gurt serve` started by
 * a careless supervisor or test harness would be. It starts one task's sandbox with a door, and
 * prints one JSON line: what the worker saw of its own descriptors and read from them, and every
 * descriptor each process of the sandbox held on the host (bubblewrap's outer process, the task
 * init, the worker), read as root while the worker waits.
 *
 *   deno run --allow-all inherited_fds_probe.ts UID GID
 */
import { processTree } from "../kit/mod.ts";
import { withSandboxBox } from "./sandbox_kit.ts";

const [uid, gid] = Deno.args.map(Number);
await withSandboxBox({ uid, gid }, async (box) => {
  const door = Deno.listen({ transport: "unix", path: box.socket });
  await Deno.chown(box.socket, uid, gid);
  const go = `${box.home}/go`;
  await new Deno.Command("mkfifo", { args: ["-m", "0600", go] }).output();
  await Deno.chown(go, uid, gid);
  // The worker (bash, which reads any fd number) lists its descriptors with ls (a child: the list
  // holds none of the shell's own passing ones), reads what each one past 2 holds, then waits on
  // the fifo (blocked in its open, holding nothing more) while the host reads the sandbox's
  // processes.
  const script = `ls -l /proc/$$/fd
    for path in /proc/$$/fd/*; do
      fd=\${path##*/}
      case $fd in 0|1|2) ;; *) echo "fd $fd: $(head -c 200 <&$fd 2>&1)";; esac
    done
    echo waiting
    read x < "$HOME/go"`;
  const child = await box.sandboxes.spawn({
    task: box.task,
    home: box.home,
    doors: [{ port: 3128, socket: box.socket }],
    readOnly: [],
    argv: ["/bin/bash", "-c", script],
    env: { PATH: "/usr/bin:/bin", HOME: box.home },
    user: box.user,
    caBundle: null,
  });
  const err = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("waiting\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const waiting = out.includes("waiting\n");
  const held = waiting ? await processTree(child.pid) : [];
  if (waiting) {
    const writer = await Deno.open(go, { write: true });
    await writer.write(new TextEncoder().encode("go\n"));
    writer.close();
  }
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const status = await child.status;
  door.close();
  console.log(JSON.stringify({ code: status.code, out, err: await err, held }));
});
