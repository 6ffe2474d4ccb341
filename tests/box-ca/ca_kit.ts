/**
 * What the box CA's tests share: a temporary box home with a fake system roots file, and running
 * the machine's openssl, curl, python3 and Node on files and capturing what they say.
 */

/** A temporary box home holding `roots.pem` (a stand-in system roots file); `ca` is its `ca/`. */
export interface CaHome {
  home: string;
  ca: string;
  roots: string;
  remove(): Promise<void>;
}

/** The stand-in system roots: a text the bundle must carry after the box CA, byte for byte. */
export const ROOTS_TEXT = "# system roots stand-in\n-----BEGIN CERTIFICATE-----\nAAAA\n" +
  "-----END CERTIFICATE-----\n";

/** Makes a temporary box home (its `ca/` not made) with the stand-in system roots file. */
export async function caHome(): Promise<CaHome> {
  const home = await Deno.makeTempDir({ prefix: "gurt-box-ca-" });
  const roots = `${home}/roots.pem`;
  await Deno.writeTextFile(roots, ROOTS_TEXT);
  return {
    home,
    ca: `${home}/ca`,
    roots,
    remove: () => Deno.remove(home, { recursive: true }),
  };
}

/** What a program printed and how it ended. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command` with `args` (in `cwd` if given, with `env` added) and returns what it printed. */
export async function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {},
): Promise<Ran> {
  const child = new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** `openssl x509 -noout -text` (and any further options) of a PEM certificate. */
export async function opensslText(pem: string, extra: string[] = []): Promise<string> {
  const out = await run("openssl", ["x509", "-noout", "-text", ...extra], { stdin: pem });
  if (out.code !== 0) throw new Error(`openssl x509 failed: ${out.stderr}`);
  return out.stdout;
}

/** The mode bits of `path` (not following a link). */
export async function modeOf(path: string): Promise<number> {
  return (await Deno.lstat(path)).mode! & 0o7777;
}
