/** Independent probes for the desktop tests: process ids, the focus, RFB, MP4 atoms. */
// @ts-types="../../mod/cua/x11_types.d.ts"
import x11 from "x11";
import { createCipheriv } from "node:crypto";
import { assertEquals } from "../assert.ts";

/** The security types an RFB server offers after the version handshake. */
export async function rfbSecurityTypes(port: number): Promise<number[]> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const version = await readExactly(conn, 12);
    assertEquals(new TextDecoder().decode(version), "RFB 003.008\n");
    await conn.write(version);
    const count = (await readExactly(conn, 1))[0];
    return [...(await readExactly(conn, count))];
  } finally {
    conn.close();
  }
}

async function readExactly(conn: Deno.Conn, n: number): Promise<Uint8Array> {
  const out = new Uint8Array(n);
  let got = 0;
  while (got < n) {
    const read = await conn.read(out.subarray(got));
    if (read === null) throw new Error(`the connection closed after ${got} of ${n} bytes`);
    got += read;
  }
  return out;
}

/** The pid of the process-group leader `name` the desktop started for `display`. */
export async function pidOf(name: string, display: string): Promise<number> {
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
      const [comm, rest] = [
        stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
        stat.slice(stat.lastIndexOf(")") + 2),
      ];
      const fields = rest.split(" ");
      if (comm !== name || fields[0] === "Z" || fields[2] !== entry.name) continue;
      const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      const environ = await Deno.readTextFile(`/proc/${entry.name}/environ`);
      const onDisplay = environ.split("\0").includes(`DISPLAY=${display}`) ||
        cmdline.split("\0")[1] === display;
      if (onDisplay) return Number(entry.name);
    } catch {
      // gone
    }
  }
  throw new Error(`no ${name} runs on ${display}`);
}

/** How the desktop tests wait with the kit's `until`: every 50 ms, for up to 20 s. */
export const DESKTOP_WAIT = { ms: 20_000, every: 50 } as const;

/** Sets the keyboard focus to None on its own X connection and waits until the server did it. */
export async function dropFocus(display: string): Promise<void> {
  const client = await new Promise<x11.Display>((resolve, reject) => {
    x11.createClient({ display, shm: false }, (err, d) => err ? reject(err) : resolve(d));
  });
  client.client.SetInputFocus(0, 0);
  const focus = await new Promise<number>((resolve, reject) => {
    client.client.GetInputFocus((err, r) => err ? reject(err) : resolve(r.focus));
  });
  client.client.terminate();
  assertEquals(focus, 0);
}

/** The four-letter names of a file's top-level MP4 atoms, in order. */
export function topLevelAtoms(bytes: Uint8Array): string[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const names: string[] = [];
  let offset = 0;
  while (offset + 8 <= bytes.length) {
    let size = view.getUint32(offset);
    const name = new TextDecoder().decode(bytes.subarray(offset + 4, offset + 8));
    if (size === 1) size = Number(view.getBigUint64(offset + 8));
    if (size === 0) size = bytes.length - offset;
    names.push(name);
    offset += size;
  }
  return names;
}

/** Whether VNC authentication (RFB security type 2) with `password` succeeds. */
export async function vncAuthenticates(port: number, password: string): Promise<boolean> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(await readExactly(conn, 12));
    await readExactly(conn, (await readExactly(conn, 1))[0]);
    await conn.write(new Uint8Array([2]));
    const challenge = await readExactly(conn, 16);
    await conn.write(vncResponse(challenge, password));
    const result = new DataView((await readExactly(conn, 4)).buffer).getUint32(0);
    return result === 0;
  } finally {
    conn.close();
  }
}

/** DES of the challenge under the password with each key byte's bits reversed (RFB 7.2.2). */
function vncResponse(challenge: Uint8Array, password: string): Uint8Array {
  const key = new Uint8Array(8);
  new TextEncoder().encode(password).slice(0, 8).forEach((byte, i) => {
    let reversed = 0;
    for (let bit = 0; bit < 8; bit++) reversed |= ((byte >> bit) & 1) << (7 - bit);
    key[i] = reversed;
  });
  // Single DES is triple DES with one key three times; each block alone, so ECB.
  const triple = new Uint8Array([...key, ...key, ...key]);
  const out = new Uint8Array(16);
  for (const offset of [0, 8]) {
    const cipher = createCipheriv("des-ede3-cbc", triple, new Uint8Array(8));
    cipher.setAutoPadding(false);
    out.set(cipher.update(challenge.subarray(offset, offset + 8)), offset);
  }
  return out;
}
