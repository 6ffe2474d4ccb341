/**
 * Runs a command the way it runs on a machine that has only `dist/gurt`: in a mount namespace of
 * its own (unshare -m) in which the checkout (with node_modules), Deno's cache and the npm-installed
 * Deno are hidden under empty folders, and /var/lib/gurt, where gurt unpacks itself as root, is a
 * folder of the test's. Root only.
 */

/** What a test hides, and what it shows in their place. */
export interface Hiding {
  /** Empty tmpfs over each. */
  empty: string[];
  /** Folder binds, `[source, target]`: the test's own folders over the real ones. */
  binds: [string, string][];
  /** Files hidden by binding /dev/null over them. */
  files: string[];
}

const checkout = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** The checkout this test runs from. */
export function checkoutRoot(): string {
  return checkout;
}

/**
 * The places to hide for a test whose own folders are `denoCache` (shown as ~/.cache/deno) and
 * `varLibGurt` (shown as /var/lib/gurt): the checkout, the npm package of the Deno running the
 * test (or, for a Deno installed elsewhere, its binary), Deno's cache.
 */
export async function hidingFor(
  places: { denoCache: string; varLibGurt: string },
): Promise<Hiding> {
  const deno = Deno.execPath();
  const npmPackage = /^(.*\/node_modules\/deno)\//.exec(deno)?.[1];
  const home = Deno.env.get("HOME") ?? "/root";
  await Deno.mkdir(`${home}/.cache/deno`, { recursive: true });
  await Deno.mkdir("/var/lib/gurt", { recursive: true, mode: 0o711 });
  return {
    empty: [checkout, ...(npmPackage === undefined ? [] : [npmPackage])],
    binds: [[places.denoCache, `${home}/.cache/deno`], [places.varLibGurt, "/var/lib/gurt"]],
    files: npmPackage === undefined ? [deno] : [],
  };
}

/** The sh script that makes the namespace's mounts, then runs its arguments. */
function mountScript(hiding: Hiding): string {
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const lines = ["set -e"];
  for (const path of hiding.empty) {
    lines.push(`mount -t tmpfs -o size=1m,mode=0755 none ${q(path)}`);
  }
  for (const [from, to] of hiding.binds) lines.push(`mount --bind ${q(from)} ${q(to)}`);
  for (const file of hiding.files) lines.push(`mount --bind /dev/null ${q(file)}`);
  lines.push('exec "$@"');
  return lines.join("\n");
}

/** The program and arguments that run `command` with the hiding in place. */
export function hiddenCommand(hiding: Hiding, command: string[]): string[] {
  return [
    "unshare",
    "-m",
    "--propagation",
    "private",
    "/bin/sh",
    "-c",
    mountScript(hiding),
    "hidden",
    ...command,
  ];
}

/** The environment every hidden command gets: nothing of the test's but PATH, HOME and LANG. */
export function plainEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: Deno.env.get("HOME") ?? "/root",
    NO_COLOR: "1",
  };
  const lang = Deno.env.get("LANG");
  if (lang !== undefined) env.LANG = lang;
  return { ...env, ...extra };
}

/** What a finished hidden command printed and how it exited. */
export interface HiddenRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command` hidden, with `env` added to the plain environment, to its end. */
export async function runHidden(
  hiding: Hiding,
  command: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<HiddenRun> {
  const out = await spawnHidden(hiding, command, options).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Starts `command` hidden and leaves it running, its stdout and stderr piped. */
export function spawnHidden(
  hiding: Hiding,
  command: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Deno.ChildProcess {
  const [program, ...args] = hiddenCommand(hiding, command);
  return new Deno.Command(program, {
    args,
    env: plainEnv(options.env),
    clearEnv: true,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}
