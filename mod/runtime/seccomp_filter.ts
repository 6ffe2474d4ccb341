/**
 * The seccomp filter of a built-in tool's sandbox, as the classic BPF program bubblewrap loads with
 * `--seccomp FD`. A tool runs as the unprivileged owner of its grant's path (sandbox_process.ts),
 * so whatever it writes belongs to that uid; the filter makes sure nothing it writes carries a
 * setuid or setgid bit, which would let anyone who can reach the file run as that owner. It
 * refuses with EPERM every chmod, and every create (open, openat, creat, mknod), whose mode holds
 * either bit. Calls the filter cannot inspect (openat2 passes its mode in a struct, io_uring does
 * the work in the kernel) answer ENOSYS, which makes libc fall back to the inspected calls. A call
 * from another architecture's ABI (x86's 32-bit or x32 calls on x86_64) kills the process.
 *
 * It also keeps every process's parent-death signal SIGKILL or none: prctl(PR_SET_PDEATHSIG) with
 * any other signal, 0 included, answers EPERM. The command is its pid namespace's pid 1, and
 * bubblewrap gives it SIGKILL for when bubblewrap dies (`--die-with-parent`); had it cleared that,
 * or set one it ignores, it would outlive the kill at its time limit, and its namespace with it.
 */

/** The architectures the filter is written for, as Deno names them. */
export type FilterArch = "x86_64" | "aarch64";

/** The calls the filter inspects: where their flags and mode are, or that it refuses outright. */
type Rule =
  | { kind: "mode"; mode: number }
  | { kind: "create"; flags: number; mode: number }
  | { kind: "enosys" }
  | { kind: "pdeathsig" }
  | { kind: "eperm" };

/** The numbers of mknod and mknodat on each architecture: refused outright with `noNodes`. */
const NODE_CALLS: Record<FilterArch, readonly number[]> = { x86_64: [133, 259], aarch64: [33] };

interface ArchTable {
  /** AUDIT_ARCH_* of the architecture: the filter kills a call from any other. */
  audit: number;
  /** The lowest number of the x32 ABI's calls, all killed; null where there is none. */
  x32: number | null;
  calls: ReadonlyArray<readonly [number, Rule]>;
}

const ARCHES: Record<FilterArch, ArchTable> = {
  x86_64: {
    audit: 0xc000003e,
    x32: 0x40000000,
    calls: [
      [2, { kind: "create", flags: 1, mode: 2 }], // open
      [85, { kind: "mode", mode: 1 }], // creat
      [90, { kind: "mode", mode: 1 }], // chmod
      [91, { kind: "mode", mode: 1 }], // fchmod
      [133, { kind: "mode", mode: 1 }], // mknod
      [157, { kind: "pdeathsig" }], // prctl
      [257, { kind: "create", flags: 2, mode: 3 }], // openat
      [259, { kind: "mode", mode: 2 }], // mknodat
      [268, { kind: "mode", mode: 2 }], // fchmodat
      [425, { kind: "enosys" }], // io_uring_setup
      [437, { kind: "enosys" }], // openat2
      [452, { kind: "mode", mode: 2 }], // fchmodat2
    ],
  },
  aarch64: {
    audit: 0xc00000b7,
    x32: null,
    calls: [
      [33, { kind: "mode", mode: 2 }], // mknodat
      [52, { kind: "mode", mode: 1 }], // fchmod
      [53, { kind: "mode", mode: 2 }], // fchmodat
      [56, { kind: "create", flags: 2, mode: 3 }], // openat
      [167, { kind: "pdeathsig" }], // prctl
      [425, { kind: "enosys" }], // io_uring_setup
      [437, { kind: "enosys" }], // openat2
      [452, { kind: "mode", mode: 2 }], // fchmodat2
    ],
  },
};

/** prctl's option that sets the parent-death signal, and the one signal it may set. */
const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;
/** S_ISUID | S_ISGID. */
const SET_ID_BITS = 0o6000;
/** O_CREAT | __O_TMPFILE: the flags with which open and openat take a mode. */
const CREATE_FLAGS = 0o100 | 0o20000000;

const LD_ABS_W = 0x20;
const JEQ = 0x15;
const JGE = 0x35;
const JSET = 0x45;
const RET = 0x06;

const ALLOW = 0x7fff0000;
const ERRNO = 0x00050000;
const KILL_PROCESS = 0x80000000;
const EPERM = 1;
const ENOSYS = 38;

/** Offsets in struct seccomp_data: the call's number, its architecture, its nth argument's low word. */
const NR = 0;
const ARCH = 4;
function arg(n: number): number {
  return 16 + 8 * n;
}

/** One instruction, its jumps naming labels (resolved once the program is laid out). */
interface Op {
  code: number;
  k: number;
  jt?: string;
  jf?: string;
  label?: string;
}

/**
 * The filter for `arch`, as bubblewrap reads it: the raw `struct sock_filter` array. With
 * `anyDeathSignal` (a task's sandbox, whose pid 1 is gurt's task init and never a task's program,
 * and whose processes are all killed with its cgroup at its end) a process may set any
 * parent-death signal for itself, as Codex does (SIGTERM) for each command it runs. With `noNodes`
 * (a task with a writable workdir, mod/workdir) mknod and mknodat answer EPERM whatever their mode:
 * no FIFO (nor socket file or device node) is made by mknod in the owner's folder.
 */
export function toolSeccompFilter(
  arch: FilterArch,
  options: { anyDeathSignal?: boolean; noNodes?: boolean } = {},
): Uint8Array {
  const base = ARCHES[arch];
  let table = options.anyDeathSignal === true
    ? { ...base, calls: base.calls.filter(([, rule]) => rule.kind !== "pdeathsig") }
    : base;
  if (options.noNodes === true) {
    const nodes = NODE_CALLS[arch];
    table = {
      ...table,
      calls: table.calls.map(([nr, rule]) =>
        [nr, nodes.includes(nr) ? { kind: "eperm" } : rule] as const
      ),
    };
  }
  const ops: Op[] = [
    { code: LD_ABS_W, k: ARCH },
    { code: JEQ, k: table.audit, jt: "next", jf: "kill" },
    { code: LD_ABS_W, k: NR },
  ];
  if (table.x32 !== null) ops.push({ code: JGE, k: table.x32, jt: "kill", jf: "next" });
  table.calls.forEach(([nr], i) => ops.push({ code: JEQ, k: nr, jt: `call${i}`, jf: "next" }));
  ops.push({ code: RET, k: ALLOW });
  table.calls.forEach(([, rule], i) => {
    const label = `call${i}`;
    if (rule.kind === "enosys") {
      ops.push({ code: RET, k: ERRNO | ENOSYS, label });
      return;
    }
    if (rule.kind === "eperm") {
      ops.push({ code: RET, k: ERRNO | EPERM, label });
      return;
    }
    if (rule.kind === "pdeathsig") {
      // The kernel reads the option as an int and refuses a signal past 64, so the low words tell.
      ops.push({ code: LD_ABS_W, k: arg(0), label });
      ops.push({ code: JEQ, k: PR_SET_PDEATHSIG, jt: "next", jf: "allow" });
      ops.push({ code: LD_ABS_W, k: arg(1) });
      ops.push({ code: JEQ, k: SIGKILL, jt: "allow", jf: "eperm" });
      return;
    }
    if (rule.kind === "create") {
      ops.push({ code: LD_ABS_W, k: arg(rule.flags), label });
      ops.push({ code: JSET, k: CREATE_FLAGS, jt: "next", jf: "allow" });
      ops.push({ code: LD_ABS_W, k: arg(rule.mode) });
    } else {
      ops.push({ code: LD_ABS_W, k: arg(rule.mode), label });
    }
    ops.push({ code: JSET, k: SET_ID_BITS, jt: "eperm", jf: "allow" });
  });
  ops.push({ code: RET, k: ERRNO | EPERM, label: "eperm" });
  ops.push({ code: RET, k: ALLOW, label: "allow" });
  ops.push({ code: RET, k: KILL_PROCESS, label: "kill" });
  return assemble(ops);
}

/** Lays the program out: each jump becomes the count of instructions it skips (0 to 255). */
function assemble(ops: readonly Op[]): Uint8Array {
  const at = new Map<string, number>();
  ops.forEach((op, i) => {
    if (op.label !== undefined) at.set(op.label, i);
  });
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined || label === "next") return 0;
    const target = at.get(label);
    if (target === undefined || target <= from || target - from - 1 > 255) {
      throw new Error(`the seccomp filter's jump to ${label} cannot be laid out`);
    }
    return target - from - 1;
  };
  const bytes = new Uint8Array(ops.length * 8);
  const view = new DataView(bytes.buffer);
  ops.forEach((op, i) => {
    view.setUint16(i * 8, op.code, true);
    view.setUint8(i * 8 + 2, offset(i, op.jt));
    view.setUint8(i * 8 + 3, offset(i, op.jf));
    view.setUint32(i * 8 + 4, op.k >>> 0, true);
  });
  return bytes;
}

/** The architecture this process runs on, if the filter has a table for it; else null. */
export function hostFilterArch(): FilterArch | null {
  const arch = Deno.build.arch as string;
  return arch === "x86_64" || arch === "aarch64" ? arch : null;
}
