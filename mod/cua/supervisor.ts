/**
 * The desktop supervisor: starts Xvfb, pins the keyboard to `us`, starts openbox, Chromium,
 * x11vnc and noVNC in that order, each ready when the thing itself answers, and restarts what
 * dies unexpectedly. Chromium closed on purpose by reset_desktop stays down until asked.
 */
import { RunningProgram } from "./child_process.ts";
import { DevTools } from "./devtools.ts";
import type { DesktopOptions } from "./options.ts";
import { XConnection } from "./x11_client.ts";
import { XObserver } from "./x11_observe.ts";

const READY_TIMEOUT_MS = 20_000;
const POLL_MS = 25;

type Part = "xvfb" | "openbox" | "chromium" | "x11vnc" | "websockify";

/** Owns the desktop's processes. */
export class Supervisor {
  #programs = new Map<Part, RunningProgram>();
  #running = false;
  #healing: Promise<void> | null = null;
  #healAgain = false;
  #chromeClosed = false;
  readonly devtools: DevTools;

  constructor(private readonly options: DesktopOptions) {
    this.devtools = new DevTools(options.cdpPort);
  }

  /** The display name. */
  get display(): string {
    return this.options.display;
  }

  /** Whether the VNC server and viewer were started (a password is set). */
  get vncEnabled(): boolean {
    return this.options.vncPassword !== null;
  }

  /** Chromium's pid, which is also its process group's id, while it runs; else null. */
  get chromePid(): number | null {
    return this.#programs.get("chromium")?.pid ?? null;
  }

  /** Whether the Chromium process is alive. */
  get chromeRunning(): boolean {
    return this.#programs.has("chromium");
  }

  /** Starts every part in order; resolves when each answers. */
  async start(): Promise<void> {
    this.#running = true;
    if (this.options.vncPassword === null) {
      console.error(
        "gurt guest: BOX_VNC_PASSWORD is not set, so no VNC server or viewer was started; " +
          "see runbook.md#desktop-vnc-password",
      );
    }
    await this.#bringUp();
  }

  /** Stops every part, last started first. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#healing) await this.#healing.catch(() => {});
    const order: Part[] = ["websockify", "x11vnc", "chromium", "openbox", "xvfb"];
    for (const part of order) {
      const program = this.#programs.get(part);
      this.#programs.delete(part);
      if (program) await program.stop();
    }
  }

  /** Says Chromium is about to be closed on purpose (reset_desktop): do not restart it. */
  chromeWillClose(): void {
    this.#chromeClosed = true;
  }

  /** Starts Chromium if it is not running and waits for DevTools; a no-op without a profile. */
  async ensureChrome(): Promise<void> {
    this.#chromeClosed = false;
    if (this.options.chromeProfile === null || this.#programs.has("chromium")) return;
    await this.#startChromium();
  }

  /** Whether waiting for `part` is pointless: it exited, or the desktop is being stopped. */
  #gone(part: Part): boolean {
    return !this.#running || !this.#programs.has(part);
  }

  async #bringUp(): Promise<void> {
    if (!this.#programs.has("xvfb")) await this.#startXvfb();
    if (this.options.windowManager && !this.#programs.has("openbox")) await this.#startOpenbox();
    if (
      this.options.chromeProfile !== null && !this.#chromeClosed && !this.#programs.has("chromium")
    ) {
      await this.#startChromium();
    }
    if (this.options.vncPassword !== null) {
      if (!this.#programs.has("x11vnc")) await this.#startVnc();
      if (!this.#programs.has("websockify")) await this.#startViewer();
    }
  }

  #watch(part: Part, program: RunningProgram): void {
    this.#programs.set(part, program);
    program.exited.then((status) => {
      if (this.#programs.get(part) !== program) return;
      this.#programs.delete(part);
      if (!this.#running || program.stopping) return;
      // Chromium closed on purpose by reset_desktop stays down until ensureChrome().
      if (part === "chromium" && this.#chromeClosed) return;
      console.error(
        `gurt guest: ${program.spec.name} exited unexpectedly (status ${status.code}); restarting it.`,
      );
      this.#heal();
    });
  }

  #heal(): void {
    // A part that dies while a heal is under way may already have been passed over: go again.
    this.#healAgain = true;
    if (this.#healing) return;
    // The loop starts a microtask later, so its own `finally` always runs after this assignment.
    this.#healing = Promise.resolve().then(() => this.#healLoop());
  }

  async #healLoop(): Promise<void> {
    let backoff = 250;
    try {
      while (this.#running && this.#healAgain) {
        this.#healAgain = false;
        try {
          // An X server that restarted takes its clients with it: restart them too.
          await this.#bringUp();
        } catch (error) {
          this.#healAgain = true;
          console.error(
            `gurt guest: the desktop could not be restarted: ${(error as Error).message}`,
          );
          await new Promise((resolve) => setTimeout(resolve, backoff));
          backoff = Math.min(backoff * 2, 5000);
        }
      }
    } finally {
      this.#healing = null;
    }
  }

  async #startXvfb(): Promise<void> {
    const program = RunningProgram.start({
      name: "Xvfb",
      command: "Xvfb",
      args: [
        this.options.display,
        "-screen",
        "0",
        this.options.geometry,
        "-nolisten",
        "tcp",
        "-noreset",
        "-displayfd",
        "1",
      ],
      readStdout: true,
    });
    // Xvfb writes the display number to -displayfd once it accepts connections.
    const line = await withDeadline(program.waitForLine((l) => /^\d+$/.test(l.trim())), "Xvfb");
    if (line === undefined) {
      await program.stop();
      throw new Error(
        `Xvfb did not start on ${this.options.display} (is the display taken?); ` +
          "see runbook.md#desktop-display-unavailable",
      );
    }
    this.#watch("xvfb", program);
    await this.#pinKeyboard();
  }

  async #pinKeyboard(): Promise<void> {
    const status = await new Deno.Command("setxkbmap", {
      args: ["-display", this.options.display, "-layout", "us"],
      stdout: "null",
      stderr: "null",
    }).output().catch(() => ({ success: false }));
    if (!status.success) {
      console.error("gurt guest: setxkbmap could not pin the keyboard layout to us.");
    }
  }

  async #startOpenbox(): Promise<void> {
    const program = RunningProgram.start({
      name: "openbox",
      command: "openbox",
      args: ["--sm-disable"],
      env: { DISPLAY: this.options.display },
    });
    this.#watch("openbox", program);
    // A fresh connection per look, so a server still coming up cannot wedge the check.
    await poll("openbox", async () => {
      const x = await XConnection.open(this.options.display, { timeoutMs: 1000 });
      try {
        return await new XObserver(x).hasWindowManager();
      } finally {
        x.close();
      }
    }, () => this.#gone("openbox"));
  }

  async #startChromium(): Promise<void> {
    const profile = this.options.chromeProfile!;
    await Deno.mkdir(profile, { recursive: true });
    for (const lock of ["SingletonLock", "SingletonSocket", "SingletonCookie"]) {
      await Deno.remove(`${profile}/${lock}`).catch(() => {});
    }
    const program = RunningProgram.start({
      name: "Chromium",
      command: "chromium",
      args: chromiumArgs(this.options, profile),
      env: { DISPLAY: this.options.display },
    });
    this.#watch("chromium", program);
    await poll(
      "Chromium's DevTools",
      () => this.devtools.ready(),
      () => this.#gone("chromium"),
    );
  }

  async #startVnc(): Promise<void> {
    const program = RunningProgram.start({
      name: "x11vnc",
      command: "x11vnc",
      args: [
        "-display",
        this.options.display,
        "-localhost",
        "-rfbport",
        String(this.options.vncPort),
        "-forever",
        "-shared",
        "-noxdamage",
        // The password travels on x11vnc's stdin, which it reads once at start: never on its
        // command line (ps shows that) nor in its environment (/proc/PID/environ, which every
        // exec, running as the guest's user, may read). A `cmd:` source would be run again at
        // every connection.
        "-passwdfile",
        "/dev/stdin",
      ],
      stdinText: `${this.options.vncPassword!}\n`,
      readStdout: true,
    });
    this.#watch("x11vnc", program);
    const line = await withDeadline(program.waitForLine((l) => l.startsWith("PORT=")), "x11vnc");
    if (line === undefined) throw new Error("x11vnc exited before it listened");
  }

  async #startViewer(): Promise<void> {
    const program = RunningProgram.start({
      name: "websockify",
      command: "websockify",
      args: [
        "--web",
        "/usr/share/novnc",
        `${this.options.viewerHost}:${this.options.viewerPort}`,
        `127.0.0.1:${this.options.vncPort}`,
      ],
    });
    this.#watch("websockify", program);
    await poll(
      "noVNC",
      () => answers(this.options.viewerHost, this.options.viewerPort),
      () => this.#gone("websockify"),
    );
  }
}

/** Polls `check` until true; fails after READY_TIMEOUT_MS or when `gone` says it died. */
async function poll(
  what: string,
  check: () => Promise<boolean>,
  gone: () => boolean = () => false,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gone()) throw new Error(`${what} exited before it answered`);
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`${what} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
}

async function withDeadline<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${READY_TIMEOUT_MS / 1000} s`)),
      READY_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function answers(host: string, port: number): Promise<boolean> {
  try {
    const connection = await Deno.connect({ hostname: host, port });
    connection.close();
    return true;
  } catch {
    return false;
  }
}

/** Chromium's command line for the desktop: its profile, its DevTools port, its first page. */
export function chromiumArgs(options: DesktopOptions, profile: string): string[] {
  return [
    "--no-sandbox",
    // Without it Chromium lays "You are using an unsupported command-line flag:
    // --no-sandbox" over every page, where it takes the first click.
    "--test-type",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--password-store=basic",
    // A container's /dev/shm is small; a crash restarted by the watcher asks nothing.
    "--disable-dev-shm-usage",
    "--hide-crash-restore-bubble",
    "--start-maximized",
    `--user-data-dir=${profile}`,
    "--remote-debugging-address=127.0.0.1",
    `--remote-debugging-port=${options.cdpPort}`,
    // The egress tunnel: every request through its proxy, loopback too ("<-loopback>" drops
    // Chromium's implicit bypass); DevTools is a listener of Chromium's and not proxied.
    ...(options.proxyServer
      ? [`--proxy-server=${options.proxyServer}`, "--proxy-bypass-list=<-loopback>"]
      : []),
    options.startUrl,
  ];
}
