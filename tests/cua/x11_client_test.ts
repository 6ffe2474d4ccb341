/**
 * The held X connection against two real X servers in one process: atoms are asked of the
 * server each connection talks to, never taken from another server's answers.
 */
import { assertEquals } from "../assert.ts";
import { XConnection } from "../../mod/cua/x11_client.ts";
import { freeDisplay, hasXvfb } from "./fixture.ts";

async function startXvfb(): Promise<{ display: string; stop: () => Promise<void> }> {
  const child = new Deno.Command("Xvfb", {
    args: [freeDisplay(), "-screen", "0", "640x480x24", "-nolisten", "tcp", "-displayfd", "1"],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  // Xvfb writes its display number once it accepts connections.
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("Xvfb exited before it was ready");
    text += value;
  }
  return {
    display: `:${text.trim()}`,
    stop: async () => {
      child.kill("SIGTERM");
      await reader.cancel();
      await child.status;
    },
  };
}

/** The atom's id as the server itself lists it, read by xlsatoms. */
async function serverAtom(display: string, name: string): Promise<number> {
  const out = await new Deno.Command("xlsatoms", {
    args: ["-display", display, "-name", name],
    stdout: "piped",
  }).output();
  return Number(new TextDecoder().decode(out.stdout).trim().split(/\s+/)[0]);
}

Deno.test({
  name: "a connection asks its own server for an atom another server already named",
  ignore: !hasXvfb(),
}, async () => {
  const a = await startXvfb();
  const b = await startXvfb();
  const connections: XConnection[] = [];
  try {
    const onA = await XConnection.open(a.display);
    connections.push(onA);
    const idOnA = await onA.atom("GURT_TEST_ATOM");
    const onB = await XConnection.open(b.display);
    connections.push(onB);
    // Server B hands out one more atom first, so the same name gets a different id there.
    await onB.atom("GURT_TEST_SHIFT");
    const idOnB = await onB.atom("GURT_TEST_ATOM");
    assertEquals(idOnA, await serverAtom(a.display, "GURT_TEST_ATOM"));
    assertEquals(idOnB, await serverAtom(b.display, "GURT_TEST_ATOM"));
    assertEquals(idOnA !== idOnB, true, "the two servers numbered the atom alike");
  } finally {
    for (const connection of connections) connection.close();
    await a.stop();
    await b.stop();
  }
});
