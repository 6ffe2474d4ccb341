/**
 * A bench's other process: a Deno script of bench/ run with the repository's config and every
 * permission, started and waited for until it prints its first line (its `ready …`), and stopped.
 */

/** A running peer and the first line it printed. */
export interface Peer {
  child: Deno.ChildProcess;
  line: string;
}

/**
 * Starts bench/`script` with `args` (and any Deno `flags` before the script) and returns once it
 * printed a line on stdout; its stderr goes to this process's.
 */
export async function startPeer(
  script: string,
  args: string[],
  options: { flags?: string[] } = {},
): Promise<Peer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-all",
      ...(options.flags ?? []),
      "--frozen",
      "--config",
      new URL("../deno.json", import.meta.url).pathname,
      new URL(`./${script}`, import.meta.url).pathname,
      ...args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`bench/${script} ${args.join(" ")} did not start: ${text}`);
    text += value;
  }
  reader.releaseLock();
  return { child, line: text.trim() };
}

/** Ends a peer with SIGTERM and waits for it to exit. */
export async function stopPeer(peer: Peer): Promise<void> {
  peer.child.kill("SIGTERM");
  await peer.child.status;
}
