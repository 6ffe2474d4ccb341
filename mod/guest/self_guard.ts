/**
 * What `gurt guest` does to its own process before the role starts, so that an exec, which runs as
 * the guest's own user, cannot take the guest's tokens (docs/guest-api.md#what-an-exec-cannot-read):
 * - reads each token once, here: from the variable, from a file, or from a descriptor it was
 *   given (`BOX_TOKEN_FILE=/dev/fd/3`), which it then closes so no exec inherits it;
 * - removes every token variable from its environment, and wipes them from the environment block
 *   the kernel shows as /proc/PID/environ (removing a variable does not touch that block);
 * - makes itself non-dumpable (prctl PR_SET_DUMPABLE 0): its /proc/PID/environ, mem and fd/ are
 *   then the kernel's to refuse to another process of its user, and it cannot be ptrace-attached.
 * It runs in the launcher's thread, which holds every permission; the role holds no ffi.
 */
import { GuestSettingsError, readSecret, SECRET_ENV } from "../exec-guest/mod.ts";

/** The environment with every secret read into its variable, and what the guest warns about. */
export interface GuardedStart {
  /** The environment as read at start, each secret's `_FILE` replaced by its value. */
  env: Record<string, string>;
  /** The tokens the role needs (BOX_TOKEN, BOX_HOST_TOKEN), as values. */
  secrets: Record<string, string>;
  /** One line for each token file an exec could read too. */
  warnings: string[];
}

const PR_GET_DUMPABLE = 3;
const PR_SET_DUMPABLE = 4;

/** A token passed on a descriptor: /dev/fd/N or /proc/self/fd/N. */
const DESCRIPTOR = /^\/(?:dev|proc\/self)\/fd\/([0-9]{1,6})$/;

const LIBC = {
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
} as const;

let libc: Deno.DynamicLibrary<typeof LIBC> | undefined;

/**
 * Reads the guest's secrets and hides them from every exec (see the top of this file). Throws
 * GuestSettingsError when a token cannot be read, or the guest cannot make itself non-dumpable.
 */
export function guardGuest(env: Record<string, string>): GuardedStart {
  if (Deno.build.os !== "linux") return { env, secrets: pick(env), warnings: [] };
  const warnings: string[] = [];
  const resolved: Record<string, string> = { ...env };
  const readTextFile = (path: string): string => {
    const fd = descriptorOf(path);
    return fd === null ? Deno.readTextFileSync(path) : readDescriptor(fd);
  };
  for (const name of ["BOX_TOKEN", "BOX_HOST_TOKEN"]) {
    const file = env[`${name}_FILE`];
    const value = readSecret(name, { env, readTextFile });
    if (value === undefined) continue;
    resolved[name] = value;
    delete resolved[`${name}_FILE`];
    if (!env[name] && file !== undefined && readableByExecs(file)) {
      warnings.push(readableWarning(`${name}_FILE`, file));
    }
  }
  const vncFile = env.BOX_VNC_PASSWORD_FILE;
  if (!env.BOX_VNC_PASSWORD && vncFile) {
    const fd = descriptorOf(vncFile);
    if (fd !== null) {
      resolved.BOX_VNC_PASSWORD = readDescriptor(fd).split("\n")[0].trim();
      delete resolved.BOX_VNC_PASSWORD_FILE;
    } else if (readableByExecs(vncFile)) {
      warnings.push(readableWarning("BOX_VNC_PASSWORD_FILE", vncFile));
    }
  }
  for (const name of SECRET_ENV) Deno.env.delete(name);
  wipeInitialEnvironment(SECRET_ENV);
  becomeNonDumpable();
  return { env: resolved, secrets: pick(resolved), warnings };
}

function pick(env: Record<string, string>): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const name of ["BOX_TOKEN", "BOX_HOST_TOKEN", "BOX_EGRESS_TOKEN"]) {
    if (env[name]) secrets[name] = env[name];
  }
  return secrets;
}

function lib(): Deno.DynamicLibrary<typeof LIBC> {
  libc ??= Deno.dlopen("libc.so.6", LIBC);
  return libc;
}

function descriptorOf(path: string): number | null {
  const match = DESCRIPTOR.exec(path);
  return match === null || Number(match[1]) < 3 ? null : Number(match[1]);
}

/**
 * Reads a descriptor the guest was given to its end (at most 64 KiB) and closes it. It is read as
 * the descriptor itself, never reopened by its /proc path, which would check the file's mode
 * again: a root-only file opened before the guest's user was taken stays readable this way only.
 */
function readDescriptor(fd: number): string {
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const buffer = new Uint8Array(4096);
      const count = Number(lib().symbols.read(fd, buffer, BigInt(buffer.length)));
      if (count < 0) throw new Error(`descriptor ${fd} cannot be read`);
      if (count === 0) break;
      chunks.push(buffer.subarray(0, count));
      total += count;
      if (total > 64 * 1024) throw new Error(`descriptor ${fd} holds more than 64 KiB`);
    }
  } finally {
    lib().symbols.close(fd);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/** Whether a process of the guest's user, as every exec is, may read this regular file. */
function readableByExecs(path: string): boolean {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch {
    return false;
  }
  if (!info.isFile) return false;
  const mode = info.mode ?? 0;
  const uid = Deno.uid();
  if (uid === 0) return true;
  if (info.uid === uid) return (mode & 0o400) !== 0;
  if (info.gid === Deno.gid()) return (mode & 0o040) !== 0;
  return (mode & 0o004) !== 0;
}

function readableWarning(variable: string, path: string): string {
  return `gurt guest: ${variable} names ${path}, which every exec can read too, since an exec ` +
    "runs as the guest's user; give it on a descriptor opened before the guest's user is taken " +
    `(${variable}=/dev/fd/3) or keep it where that user cannot read; ` +
    "see runbook.md#guest-token-readable";
}

/**
 * Overwrites, in the environment block the kernel shows as /proc/self/environ, every entry that
 * names one of `names`, with NUL bytes. Deno.env.delete takes them out of the C library's list
 * only; the block the process started with is unchanged until written here.
 */
function wipeInitialEnvironment(names: readonly string[]): void {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  // Fields 50 and 51 (env_start, env_end), counted from the state, field 3, after the name.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = Number(fields[47]);
  const end = Number(fields[48]);
  if (!(end > start) || end - start > 4 * 1024 * 1024) return;
  const mem = Deno.openSync("/proc/self/mem", { read: true, write: true });
  try {
    const block = new Uint8Array(end - start);
    mem.seekSync(start, Deno.SeekMode.Start);
    for (let at = 0; at < block.length;) {
      const count = mem.readSync(block.subarray(at));
      if (count === null || count === 0) break;
      at += count;
    }
    const prefixes = names.map((name) => new TextEncoder().encode(`${name}=`));
    for (let entry = 0; entry < block.length;) {
      let stop = block.indexOf(0, entry);
      if (stop < 0) stop = block.length;
      const hit = prefixes.some((prefix) =>
        stop - entry >= prefix.length && prefix.every((byte, i) => block[entry + i] === byte)
      );
      if (hit) {
        mem.seekSync(start + entry, Deno.SeekMode.Start);
        mem.writeSync(new Uint8Array(stop - entry));
      }
      entry = stop + 1;
    }
  } finally {
    mem.close();
  }
}

/** prctl(PR_SET_DUMPABLE, 0), checked with PR_GET_DUMPABLE; throws where it does not hold. */
function becomeNonDumpable(): void {
  let state: number;
  try {
    const prctl = lib().symbols.prctl;
    prctl(PR_SET_DUMPABLE, 0n, 0n, 0n, 0n);
    state = prctl(PR_GET_DUMPABLE, 0n, 0n, 0n, 0n);
  } catch (error) {
    state = -1;
    if (!(error instanceof Error)) throw error;
  }
  if (state !== 0) {
    throw new GuestSettingsError(
      "the guest could not make itself non-dumpable (prctl PR_SET_DUMPABLE through libc.so.6), " +
        "so every exec could read its tokens from /proc; see runbook.md#guest-not-dumpable",
    );
  }
}
