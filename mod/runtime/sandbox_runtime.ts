/**
 * The runtime of the built-in tools: read_file, write_file and shell in a bubblewrap sandbox that
 * mounts exactly the spec's paths, http_fetch in the core through the HttpFetcher. A command that
 * exits non-zero is a result with its output and exit status; every failure of the runtime itself
 * is one of the fixed sentences of RUN_ERRORS, never text a tool printed or read.
 */
import type { Config } from "../config/mod.ts";
import { writeFileAtomic } from "../common/mod.ts";
import { pathInside } from "../policy/mod.ts";
import { type FetcherOptions, HttpFetcher } from "./http_fetch.ts";
import {
  cgroupPlan,
  CgroupSlots,
  memoryCgroupRoot,
  PIDS_CGROUP_ROOT,
  runtimeCgroupRoot,
  sweepCgroups,
} from "./process_cap.ts";
import {
  type Mount,
  RefusingRuntime,
  RunError,
  type RunOutput,
  type RunSpec,
  type Runtime,
} from "./run_spec.ts";
import { MAX_MOUNTS, sandboxArgs, sandboxCommand, type SystemLayout } from "./sandbox_args.ts";
import { runSandbox, type SandboxEnd } from "./sandbox_process.ts";
import { hostFilterArch, toolSeccompFilter } from "./seccomp_filter.ts";
import { probeSystemLayout } from "./system_layout.ts";

/** gurt.toml's [runtime] table. */
export type RuntimeSettings = Config["runtime"];

/** The fixed sentences of the sandbox's failures. */
export const RUN_ERRORS = {
  timedOut: "the tool ran longer than its time limit and was stopped; see runbook.md#runtime-limit",
  sandboxFailed: "the sandbox could not start; see runbook.md#runtime-unavailable",
  protectedPath:
    "the grant's path holds or lies inside gurt's own files (the box home or the vault), which the sandbox never mounts; see runbook.md#runtime-protected-path",
  linkedPath:
    "the grant's path leads elsewhere through a link, which the sandbox never follows; see runbook.md#runtime-linked-path",
  tooManyPaths:
    "the grant has more than 6 paths, more than one call can mount; see runbook.md#runtime-linked-path",
  rootOwned:
    "the grant lets a tool write in a folder or file that root owns, and tools never run as root; give the path to an ordinary user (chown), or grant a folder of one; see runbook.md#runtime-root-owned-path",
  mixedOwners:
    "the grant lets a tool write in paths of two different owners, and a tool runs as exactly one of them; split the grant by owner; see runbook.md#runtime-root-owned-path",
  openParent:
    "a folder above the grant's path is another user's, a link, or one others may write, so someone else could have put what is at the path there, and a tool runs as its owner; see runbook.md#runtime-open-parent",
  missingPath:
    "the grant's path does not exist on this box (moved, removed, or mistyped in the grant); see runbook.md#runtime-missing-path",
  missingCwd:
    "the shell's cwd does not exist inside the granted path; see runbook.md#runtime-missing-path",
  readFailed:
    "the file could not be read: it does not exist inside the granted path or is not a readable file",
  writeFailed:
    "the file could not be written: its directory does not exist inside the granted path, or it is not writable",
} as const;

/** How the runtime is started; tests give the fetcher a CA, a resolver and a port. */
export interface RuntimeOptions {
  /** The bubblewrap program; `bwrap` on the PATH by default. */
  bwrap?: string;
  fetcher?: FetcherOptions;
  /**
   * The folder of this runtime's pids cgroups; null for none (no process cap). By default a new
   * folder under PIDS_CGROUP_ROOT for each runtime.
   */
  cgroupRoot?: string | null;
  /**
   * Paths the sandbox never mounts, nor anything that holds them: the box home and the vault. A
   * grant over one of them would let a tool rewrite the grants or read every secret.
   */
  protectedPaths?: readonly string[];
  /** Where the runtime says what went wrong inside (bubblewrap's own complaints). */
  log?: (line: string) => void;
  /**
   * A folder only root may write, where the runtime keeps the seccomp filter its wrapper loads
   * (the core gives BOX_HOME/run). By default a new temporary folder, removed at close.
   */
  stateDir?: string;
}

/** Runs built-in tools in bubblewrap, and http_fetch in the core. */
export class SandboxRuntime implements Runtime {
  readonly #slots = new CgroupSlots();

  private constructor(
    readonly settings: RuntimeSettings,
    readonly layout: SystemLayout,
    /** The pids cgroup root, or null where the box has none the core may use. */
    readonly cgroupRoot: string | null,
    readonly fetcher: HttpFetcher,
    readonly bwrap: string,
    readonly log: (line: string) => void,
    /** The protected paths, as given and as resolved (symlinks followed). */
    readonly protectedPaths: readonly string[],
    /** The seccomp filter's file, and the temporary folder holding it (null when given). */
    readonly filter: { path: string; made: string | null },
    /** Whether each call also gets a memory cgroup beside its pids one. */
    readonly capsMemory: boolean,
  ) {}

  /**
   * Starts the runtime if a trivial sandbox runs, with a pids cgroup per call where that works
   * too; otherwise the refusing runtime. The notices say what is refused or not enforced, and why.
   */
  static async start(
    settings: RuntimeSettings,
    options: RuntimeOptions = {},
  ): Promise<{ runtime: Runtime; notices: string[] }> {
    const log = options.log ?? ((line: string) => console.error(line));
    const bwrap = options.bwrap ?? "bwrap";
    const layout = await probeSystemLayout();
    const protectedPaths: string[] = [];
    for (const path of options.protectedPaths ?? []) {
      protectedPaths.push(path, await Deno.realPath(path).catch(() => path));
    }
    const fetcher = new HttpFetcher({
      timeoutMs: settings.fetch_timeout_ms,
      maxBytes: settings.max_fetch_bytes,
      maxRedirects: settings.max_redirects,
      allowPrivateHosts: settings.allow_private_hosts,
    }, options.fetcher);
    const arch = hostFilterArch();
    if (arch === null) {
      return {
        runtime: new RefusingRuntime(),
        notices: [
          `gurt: built-in tools are refused: the sandbox's seccomp filter has no table for ${Deno.build.arch}; see runbook.md#runtime-unavailable`,
        ],
      };
    }
    const filter = await writeFilter(toolSeccompFilter(arch), options.stateDir);
    let root = options.cgroupRoot === undefined ? null : options.cgroupRoot;
    if (options.cgroupRoot === undefined) {
      await sweepCgroups(PIDS_CGROUP_ROOT);
      await sweepCgroups(memoryCgroupRoot(PIDS_CGROUP_ROOT)!);
      root = runtimeCgroupRoot();
    }
    let capProblem = "no cgroup root is configured";
    let memoryProblem = "";
    for (
      const capsMemory of root === null || memoryCgroupRoot(root) === null ? [] : [true, false]
    ) {
      const capped = new SandboxRuntime(
        settings,
        layout,
        root,
        fetcher,
        bwrap,
        log,
        protectedPaths,
        filter,
        capsMemory,
      );
      const problem = await capped.#check();
      if (problem === null) {
        return {
          runtime: capped,
          notices: capsMemory ? [] : [
            `gurt: this box has no memory cgroup the core can use (${memoryProblem}), so a call's memory is held only by its address-space limit and the sizes of its /tmp and /dev/shm, not what it keeps in memfds; see runbook.md#runtime-limit`,
          ],
        };
      }
      if (capsMemory) memoryProblem = problem;
      capProblem = problem;
    }
    const uncapped = new SandboxRuntime(
      settings,
      layout,
      null,
      fetcher,
      bwrap,
      log,
      protectedPaths,
      filter,
      false,
    );
    const problem = await uncapped.#check();
    if (problem !== null) {
      await uncapped.#removeFilter();
      return {
        runtime: new RefusingRuntime(),
        notices: [
          `gurt: built-in tools are refused: a trivial bubblewrap sandbox did not run (${problem}); see runbook.md#runtime-unavailable`,
        ],
      };
    }
    return {
      runtime: uncapped,
      notices: [
        `gurt: this box has no pids cgroup the core can use (${capProblem}), so the runtime's max_processes is not enforced; see runbook.md#runtime-limit`,
      ],
    };
  }

  /** Removes this runtime's folder of pids cgroups (its calls have ended) and its own files. */
  async close(): Promise<void> {
    await this.#removeFilter();
    if (this.cgroupRoot === null) return;
    for (
      const own of [this.cgroupRoot, this.capsMemory ? memoryCgroupRoot(this.cgroupRoot) : null]
    ) {
      if (own !== null) await sweepCgroups(own.slice(0, own.lastIndexOf("/")), own);
    }
  }

  async #removeFilter(): Promise<void> {
    if (this.filter.made !== null) {
      await Deno.remove(this.filter.made, { recursive: true }).catch(() => {});
    }
  }

  /** Whether each call gets its own pids cgroup (max_processes holds). */
  get capsProcesses(): boolean {
    return this.cgroupRoot !== null;
  }

  /** Runs one built-in call; every failure is one of RUN_ERRORS or FETCH_ERRORS. */
  async run(spec: RunSpec): Promise<RunOutput> {
    try {
      return await this.#run(spec);
    } catch (error) {
      if (error instanceof RunError) throw error;
      this.log(`gurt: the runtime failed: ${describe(error)}`);
      throw new RunError(RUN_ERRORS.sandboxFailed);
    }
  }

  async #run(spec: RunSpec): Promise<RunOutput> {
    const args = spec.args;
    if (args.kind === "http_fetch") return await this.fetcher.fetch(args.url, spec.egress ?? []);
    if (spec.mounts.length > MAX_MOUNTS) throw new RunError(RUN_ERRORS.tooManyPaths);
    if (await this.#touchesProtected(spec.mounts.map((mount) => mount.path))) {
      throw new RunError(RUN_ERRORS.protectedPath);
    }
    const command = sandboxCommand(spec);
    const end = await this.#sandbox(
      sandboxArgs(command, { ...this.#argOptions(), mounts: spec.mounts }),
      {
        stdin: command.stdin,
        mounts: spec.mounts,
      },
    );
    if (end.kind === "timed_out") throw new RunError(RUN_ERRORS.timedOut);
    const output = new TextDecoder().decode(end.output);
    switch (args.kind) {
      case "read_file":
        // A file past the output cap was cut, and cat killed for it: a result, marked truncated.
        if (end.status !== 0 && !end.truncated) throw new RunError(RUN_ERRORS.readFailed);
        return { content: output, truncated: end.truncated };
      case "write_file":
        if (end.status !== 0) throw new RunError(RUN_ERRORS.writeFailed);
        return {
          content: `wrote ${new TextEncoder().encode(args.content).length} bytes to ${args.path}`,
          truncated: false,
        };
      default: {
        const cut = end.truncated
          ? `\n[output cut at ${this.settings.max_output_bytes} bytes; the command was stopped]`
          : "";
        return {
          content: `${output}${cut}\n[exit status ${end.status}]`,
          truncated: end.truncated,
        };
      }
    }
  }

  /**
   * Whether a mount, as written or with its symlinks followed (bubblewrap follows them), holds or
   * lies inside a protected path. `realpath` runs as a program: the core may not read grant paths.
   */
  async #touchesProtected(paths: readonly string[]): Promise<boolean> {
    if (paths.length === 0 || this.protectedPaths.length === 0) return false;
    const out = await new Deno.Command("realpath", {
      args: ["-m", "--", ...paths],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
    }).output();
    if (!out.success) return true;
    const resolved = new TextDecoder().decode(out.stdout).split("\n").filter((line) => line !== "");
    return [...paths, ...resolved].some((path) =>
      this.protectedPaths.some((kept) => pathInside(path, kept) || pathInside(kept, path))
    );
  }

  /** Runs a sandbox; throws the fixed sentence if bubblewrap or the wrapper failed. */
  async #sandbox(
    args: string[],
    options: { stdin: string | null; timeoutMs?: number; mounts: readonly Mount[] },
  ): Promise<SandboxEnd> {
    const end = await this.#spawn(args, options).catch((error) => {
      this.log(`gurt: the sandbox could not be started: ${describe(error)}`);
      throw new RunError(RUN_ERRORS.sandboxFailed);
    });
    const problem = sandboxProblem(end);
    if (problem === "gurt-sandbox: linked path") throw new RunError(RUN_ERRORS.linkedPath);
    if (problem === "gurt-sandbox: root-owned path") throw new RunError(RUN_ERRORS.rootOwned);
    if (problem === "gurt-sandbox: mixed owners") throw new RunError(RUN_ERRORS.mixedOwners);
    if (problem === "gurt-sandbox: open parent") {
      const folder = end.kind === "exited" ? end.stderr.split("\n")[1] ?? "" : "";
      this.log(
        `gurt: a call was refused: the folder ${
          JSON.stringify(folder)
        } above its grant's path is another user's, a link, or open to others' writes; see runbook.md#runtime-open-parent`,
      );
      throw new RunError(RUN_ERRORS.openParent);
    }
    if (problem === "gurt-sandbox: missing path") throw new RunError(RUN_ERRORS.missingPath);
    if (problem?.startsWith("bwrap: Can't chdir to ")) throw new RunError(RUN_ERRORS.missingCwd);
    if (problem !== null) {
      this.log(`gurt: the sandbox could not start: ${problem}`);
      throw new RunError(RUN_ERRORS.sandboxFailed);
    }
    return end;
  }

  async #spawn(
    args: string[],
    options: { stdin: string | null; timeoutMs?: number; mounts: readonly Mount[] },
  ): Promise<SandboxEnd> {
    const root = this.cgroupRoot;
    const slot = root === null ? null : this.#slots.take();
    try {
      return await runSandbox(args, {
        bwrap: this.bwrap,
        stdin: options.stdin,
        mounts: options.mounts,
        filter: this.filter.path,
        cgroup: root === null || slot === null ? null : cgroupPlan(this.settings.max_processes, {
          slot,
          root,
          memoryRoot: this.capsMemory ? memoryCgroupRoot(root) : null,
        }),
        limits: {
          timeoutMs: options.timeoutMs ?? this.settings.timeout_ms,
          memoryBytes: this.settings.memory_bytes,
          maxOutputBytes: this.settings.max_output_bytes,
        },
      });
    } finally {
      if (slot !== null) this.#slots.give(slot);
    }
  }

  /** The start check: `/bin/true` in a sandbox with no mounts exits 0. Null when it did. */
  async #check(): Promise<string | null> {
    const args = sandboxArgs(
      { argv: ["/bin/true"], cwd: "/tmp", stdin: null },
      { ...this.#argOptions(), mounts: [] },
    );
    try {
      const end = await this.#spawn(args, {
        stdin: null,
        timeoutMs: Math.max(this.settings.timeout_ms, 5000),
        mounts: [],
      });
      if (end.kind === "timed_out") return "it did not finish within its time limit";
      if (end.status === 0) return null;
      const said = sandboxProblem(end) ?? "";
      if (said.startsWith("setpriv:") && Deno.uid() !== 0) {
        return "gurt serve does not run as root, and a tool runs as the owner of its grant's path, which only root can become";
      }
      return `it exited with status ${end.status}${said === "" ? "" : `: ${said}`}`;
    } catch (error) {
      return describe(error);
    }
  }

  #argOptions(): { layout: SystemLayout; tmpBytes: number } {
    return { layout: this.layout, tmpBytes: this.settings.memory_bytes };
  }
}

/**
 * Writes the seccomp filter where the wrapper opens it as root: in `dir` (made 0700 if missing), or
 * in a new temporary folder. Written anew at every start, atomically (common's writeFileAtomic).
 */
async function writeFilter(
  bytes: Uint8Array,
  dir: string | undefined,
): Promise<{ path: string; made: string | null }> {
  const made = dir === undefined ? await Deno.makeTempDir({ prefix: "gurt-runtime-" }) : null;
  const folder = dir ?? made!;
  await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
  const path = `${folder}/tool-seccomp.bpf`;
  await writeFileAtomic(path, bytes);
  return { path, made };
}

/** bubblewrap's or the wrapper's own complaint, if the run ended with one; else null. */
function sandboxProblem(end: SandboxEnd): string | null {
  if (end.kind !== "exited") return null;
  const first = end.stderr.trim().split("\n")[0] ?? "";
  return first.startsWith("bwrap:") || first.startsWith("gurt-sandbox:") ||
      first.startsWith("setpriv:")
    ? first
    : null;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
