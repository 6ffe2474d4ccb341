/**
 * How `gurt vault set` gets a value: from standard input when it is a pipe or file, or from a
 * prompt that does not echo when it is a terminal. Never from the command line, where it would sit
 * in the shell's history and in every process listing.
 */

/** Reads the value: the whole of stdin (one trailing newline dropped), or a no-echo prompt. */
export async function readSecretValue(name: string): Promise<string> {
  if (Deno.stdin.isTerminal()) return await promptHidden(`value of ${name} (not shown): `);
  const text = new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer());
  return text.replace(/\r?\n$/, "");
}

/** Prompts on stderr and reads one line with the terminal in raw mode, so nothing is echoed. */
async function promptHidden(question: string): Promise<string> {
  const encoder = new TextEncoder();
  // Raw mode first: whatever is typed once the question shows is never echoed.
  Deno.stdin.setRaw(true);
  await Deno.stderr.write(encoder.encode(question));
  const typed: number[] = [];
  const buffer = new Uint8Array(256);
  try {
    while (true) {
      const n = await Deno.stdin.read(buffer);
      if (n === null) break;
      for (const byte of buffer.subarray(0, n)) {
        if (byte === 0x0d || byte === 0x0a) return new TextDecoder().decode(new Uint8Array(typed));
        if (byte === 0x03) throw new Error("cancelled: no value was set");
        if (byte === 0x04 && typed.length === 0) throw new Error("no value was given");
        if (byte === 0x7f || byte === 0x08) {
          typed.pop();
          continue;
        }
        typed.push(byte);
      }
    }
    return new TextDecoder().decode(new Uint8Array(typed));
  } finally {
    Deno.stdin.setRaw(false);
    await Deno.stderr.write(encoder.encode("\n"));
  }
}
