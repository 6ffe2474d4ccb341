/**
 * A task's flood, as its own process: opens COUNT connections to SOCKET and sends nothing on
 * them. Prints `opened N` once they are open, then `closed STATUS-LINE` for each one the server
 * answers or closes, and closes every connection and exits when its stdin ends.
 *
 *   deno run --allow-all tests/net/flood_client.ts SOCKET COUNT
 *
 * SOCKET `tcp:PORT` floods 127.0.0.1:PORT instead.
 */
const [socket, countText] = Deno.args;
const count = Number(countText);
const encoder = new TextEncoder();
const say = (line: string) => Deno.stdout.writeSync(encoder.encode(`${line}\n`));

const conns: Deno.Conn[] = [];
for (let at = 0; at < count; at++) {
  try {
    conns.push(
      socket.startsWith("tcp:")
        ? await Deno.connect({ hostname: "127.0.0.1", port: Number(socket.slice(4)) })
        : await Deno.connect({ transport: "unix", path: socket }),
    );
  } catch (error) {
    say(`connect failed ${(error as Error).message}`);
    break;
  }
}
say(`opened ${conns.length}`);
for (const conn of conns) {
  (async () => {
    const buffer = new Uint8Array(512);
    let first = "";
    try {
      const read = await conn.read(buffer);
      first = read === null ? "EOF" : new TextDecoder().decode(buffer.subarray(0, read));
    } catch (error) {
      first = (error as Error).message;
    }
    say(`closed ${JSON.stringify(first)}`);
  })();
}
for await (const _ of Deno.stdin.readable) {
  // Holds until the test closes stdin.
}
for (const conn of conns) {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
Deno.exit(0);
