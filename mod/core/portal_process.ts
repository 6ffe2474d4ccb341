/**
 * The owner's portal as a child of the core: `gurt portal-serve` in its own process and role (no
 * vault, no audit writes, no programs, no network but its listener and the admin socket). The core
 * starts it, writes portal.addr once it says where it listens, copies its stderr into the core's
 * log, starts it again when it dies (after a pause that doubles up to 30 s, back to the first once
 * it has run a minute), and stops it on shutdown. The portal's stdin is a pipe the core never
 * writes to: when the core dies, it ends, and the portal stops. A portal that cannot listen moves
 * to a free port when `[portal] listen` was not set, and is given up after LISTEN_TRIES when it was.
 */
import { parseListenAddress, portalAddrPath } from "../config/mod.ts";
import { ensureOwnerToken, PORTAL_CANNOT_LISTEN } from "../portal/mod.ts";
import { gurtInvocation } from "./self_command.ts";

/** How the portal is started. */
export interface PortalProcessOptions {
  home: string;
  /** `[portal] listen`. */
  listen: string;
  /** Whether gurt.toml set it: if not, a taken address is left for a free port. */
  listenSet?: boolean;
  /** The core's log (lines are redacted there). */
  log: (line: string) => void;
  /** The first pause before a restart; 500 ms. */
  firstPauseMs?: number;
}

const LONGEST_PAUSE_MS = 30_000;
/** A portal that ran this long before it died is restarted after the first pause again. */
const HEALTHY_MS = 60_000;
/** How long a stopping portal has before it is killed. */
const STOP_GRACE_MS = 5_000;
/** How many times in a row a portal that cannot listen on the address it was given is started. */
export const LISTEN_TRIES = 3;
const ADDR = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;

/** The running portal child, restarted whenever it dies, until close. */
export class PortalProcess {
  readonly #options: PortalProcessOptions;
  #child: Deno.ChildProcess | null = null;
  #closing = false;
  #wake = Promise.withResolvers<void>();
  #loop: Promise<void> = Promise.resolve();
  /** Where the next start listens: `[portal] listen`, a free port's request, or where it was. */
  #listen: string;
  /** Whether the last start said where it listens. */
  #listened = false;

  private constructor(options: PortalProcessOptions) {
    this.#options = options;
    this.#listen = options.listen;
  }

  /**
   * Starts the portal and watches it. Returns null, having logged why, when the owner token is
   * unusable (see runbook.md#portal-token-exposed): the core then runs without its portal.
   */
  static async start(options: PortalProcessOptions): Promise<PortalProcess | null> {
    try {
      await ensureOwnerToken(options.home);
    } catch (error) {
      options.log(`gurt serve: the portal is off: ${(error as Error).message}`);
      return null;
    }
    const portal = new PortalProcess(options);
    portal.#loop = portal.#watch();
    return portal;
  }

  /** The portal's pid while it runs (tests kill it); null between runs. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** Stops the portal (SIGTERM, then SIGKILL after 5 s) and removes portal.addr. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#wake.resolve();
    const child = this.#child;
    if (child !== null) {
      signal(child, "SIGTERM");
      const timer = setTimeout(() => signal(child, "SIGKILL"), STOP_GRACE_MS);
      await child.status;
      clearTimeout(timer);
    }
    await this.#loop;
    await Deno.remove(portalAddrPath(this.#options.home)).catch(() => {});
  }

  async #watch(): Promise<void> {
    const first = this.#options.firstPauseMs ?? 500;
    let pause = first;
    let cannotListen = 0;
    while (!this.#closing) {
      const started = Date.now();
      this.#listened = false;
      const status = await this.#runOnce();
      await Deno.remove(portalAddrPath(this.#options.home)).catch(() => {});
      if (this.#closing) return;
      if (Date.now() - started >= HEALTHY_MS) pause = first;
      const listenFailed = !this.#listened && status.code === PORTAL_CANNOT_LISTEN;
      cannotListen = listenFailed ? cannotListen + 1 : 0;
      if (listenFailed && this.#options.listenSet !== true && !this.#onAnyPort()) {
        // [portal] listen was not set: the address was only a default, and a free port will do.
        const free = this.#anyPort();
        this.#options.log(
          `gurt serve: the portal cannot listen on ${this.#listen} ([portal] listen is not set); ` +
            `it listens on a free port instead; see runbook.md#portal-listen-failed`,
        );
        this.#listen = free;
        cannotListen = 0;
        continue;
      }
      if (cannotListen >= LISTEN_TRIES) {
        this.#options.log(
          `gurt serve: the portal cannot listen on ${this.#listen} (tried ${LISTEN_TRIES} times); ` +
            `the portal stays off until gurt serve is restarted: free the port or set another ` +
            `[portal] listen; see runbook.md#portal-listen-failed`,
        );
        return;
      }
      this.#options.log(
        `gurt serve: the portal stopped (${describe(status)}); it starts again in ` +
          `${seconds(pause)}; see runbook.md#portal-stopped`,
      );
      await wakeOrDelay(this.#wake.promise, pause);
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    }
  }

  /** Whether the next start already asks for any free port. */
  #onAnyPort(): boolean {
    const parsed = parseListenAddress(this.#listen);
    return "problem" in parsed || parsed.port === 0;
  }

  /** The address on the same loopback host with port 0: the system chooses a free port. */
  #anyPort(): string {
    return this.#listen.replace(/:[0-9]+$/, ":0");
  }

  /** Runs the portal once, to its end. */
  async #runOnce(): Promise<Deno.CommandStatus> {
    const { home, log } = this.#options;
    const listen = this.#listen;
    const { program, args } = gurtInvocation(["--home", home, "portal-serve", "--listen", listen]);
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(program, {
        args,
        env: portalEnv(),
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        // Its own process group: a Ctrl-C at gurt serve's terminal reaches the core, which stops
        // the portal itself, rather than the portal first (which the core would start again).
        detached: true,
      }).spawn();
    } catch (error) {
      log(`gurt serve: the portal could not be started: ${(error as Error).message}`);
      return { success: false, code: 127, signal: null };
    }
    this.#child = child;
    // Held open, never written: it ends when the core does.
    const stdin = child.stdin.getWriter();
    const lines = [
      this.#readAddress(child.stdout),
      forEachLine(child.stderr, log),
    ];
    const status = await child.status;
    this.#child = null;
    await stdin.close().catch(() => {});
    await Promise.all(lines);
    return status;
  }

  /** Reads the portal's stdout: its one line says where it listens, and portal.addr says so. */
  async #readAddress(stdout: ReadableStream<Uint8Array>): Promise<void> {
    const { home, log } = this.#options;
    await forEachLine(stdout, async (line) => {
      let addr: unknown = null;
      try {
        addr = (JSON.parse(line) as { listening?: unknown }).listening;
      } catch {
        // Not the line: ignored below.
      }
      if (typeof addr !== "string" || !ADDR.test(addr)) {
        log(`gurt serve: the portal printed ${JSON.stringify(line.slice(0, 200))}; ignored`);
        return;
      }
      this.#listened = true;
      // A free port the system chose is kept: a restart listens where the owner's pages were.
      if (this.#onAnyPort()) this.#listen = addr;
      try {
        await Deno.writeTextFile(portalAddrPath(home), `${addr}\n`, { mode: 0o644 });
      } catch (error) {
        log(
          `gurt serve: ${portalAddrPath(home)} could not be written: ${(error as Error).message}`,
        );
      }
      log(
        `gurt serve: portal at http://${addr} (pid ${this.pid}); gurt portal prints a sign-in link`,
      );
    });
  }
}

/** What the portal process is given of the core's environment: enough to run gurt, no more. */
function portalEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["PATH", "HOME", "LANG", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Calls `each` with every line of a stream, in order, until it ends. */
async function forEachLine(
  stream: ReadableStream<Uint8Array>,
  each: (line: string) => void | Promise<void>,
): Promise<void> {
  let rest = "";
  try {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      rest += text;
      let newline = rest.indexOf("\n");
      while (newline !== -1) {
        const line = rest.slice(0, newline);
        rest = rest.slice(newline + 1);
        if (line !== "") await each(line);
        newline = rest.indexOf("\n");
      }
    }
  } catch {
    // The stream broke: nothing more to read.
  }
  if (rest !== "") await each(rest);
}

function signal(child: Deno.ChildProcess, name: Deno.Signal): void {
  try {
    child.kill(name);
  } catch {
    // already gone
  }
}

function describe(status: Deno.CommandStatus): string {
  return status.signal !== null ? `killed by ${status.signal}` : `exit status ${status.code}`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** Waits `ms`, or less if `wake` settles first; leaves no timer behind. */
async function wakeOrDelay(wake: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const delay = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([wake, delay]);
  clearTimeout(timer);
}
