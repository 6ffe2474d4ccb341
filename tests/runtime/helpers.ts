/** Test helpers: RunSpecs built the only way there is (a real decision), and a runtime on them. */
import { parseConfig } from "../../mod/config/mod.ts";
import { decide } from "../../mod/policy/mod.ts";
import {
  type RunSpec,
  runSpecFor,
  type RuntimeSettings,
  SandboxRuntime,
} from "../../mod/runtime/mod.ts";
import { at, grantSet } from "../policy/helpers.ts";
import { type GrantSpec, withHome } from "../kit/mod.ts";

/** The spec for a call allowed by one auto grant; throws if the grant does not allow it. */
export function specFor(grant: GrantSpec, tool: string, input: unknown): RunSpec {
  const outcome = decide({ tool, arguments: input }, { grants: grantSet({ g: grant }), ...at() });
  if (outcome.kind !== "allowed") {
    throw new Error(`the test grant does not allow the call: ${JSON.stringify(outcome)}`);
  }
  return runSpecFor(outcome.decision);
}

/** The [runtime] settings: the defaults, with some replaced. */
export function settings(extra: Partial<RuntimeSettings> = {}): RuntimeSettings {
  return { ...parseConfig("gurt.toml", "").runtime, ...extra };
}

/**
 * The unprivileged owner of the folders the runtime tests grant: a tool runs as the owner of its
 * grant's path, never as root, and refuses to write where root owns the path.
 */
export const TOOL_OWNER = { uid: 61234, gid: 61234 } as const;

/** Gives `path`, and everything under it, to TOOL_OWNER (as root). */
export async function ownTree(path: string): Promise<void> {
  const out = await new Deno.Command("chown", {
    args: ["-R", "--no-dereference", `${TOOL_OWNER.uid}:${TOOL_OWNER.gid}`, "--", path],
  }).output();
  if (!out.success) throw new Error(`chown ${path}: ${new TextDecoder().decode(out.stderr)}`);
}

/** A new temporary folder of TOOL_OWNER's (0755), removed after `fn`. */
export async function withOwnedDir(fn: (dir: string) => Promise<void>): Promise<void> {
  await withHome(async (dir) => {
    await Deno.chmod(dir, 0o755);
    await ownTree(dir);
    await fn(dir);
  }, { prefix: "gurt-runtime-" });
}

/** A sandbox runtime that must start (bubblewrap runs here), with [runtime] settings replaced. */
export async function sandboxRuntime(
  extra: Partial<RuntimeSettings> = {},
): Promise<SandboxRuntime> {
  const started = await SandboxRuntime.start(settings({ timeout_ms: 20_000, ...extra }), {
    log: () => {},
  });
  if (!(started.runtime instanceof SandboxRuntime)) throw new Error(started.notices.join(" "));
  return started.runtime;
}

/**
 * Runs `work` on a sandbox runtime ([runtime] settings replaced as `extra` says) and a new folder
 * of TOOL_OWNER's; afterwards runs `cleanup` (if given), closes the runtime and removes the folder.
 */
export async function withSandbox(
  extra: Partial<RuntimeSettings>,
  work: (rt: SandboxRuntime, dir: string) => Promise<void>,
  cleanup?: () => Promise<void>,
): Promise<void> {
  const rt = await sandboxRuntime(extra);
  try {
    await withOwnedDir((dir) => work(rt, dir));
  } finally {
    await cleanup?.();
    await rt.close();
  }
}

/** The spec of a shell call under a shell grant on `paths`, run in the first of them. */
export function shellIn(command: string, paths: string[]): RunSpec {
  return specFor({ tool: "shell", paths }, "shell", { command, cwd: paths[0] });
}

/** The pids of host processes (not this one) whose argv holds `marker`. */
export async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (cmdline.includes(marker)) found.push(Number(entry.name));
  }
  return found;
}

/** Gives `path`, and everything under it, to `who` (as root), links themselves included. */
export async function chownTree(path: string, who: { uid: number; gid: number }): Promise<void> {
  const out = await new Deno.Command("chown", {
    args: ["-R", "--no-dereference", `${who.uid}:${who.gid}`, "--", path],
  }).output();
  if (!out.success) throw new Error(`chown ${path}: ${new TextDecoder().decode(out.stderr)}`);
}
