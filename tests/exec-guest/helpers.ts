/** Test plumbing for the guest: the real daemon as a child process, or both apps in-process. */
import {
  createExecApp,
  createHostApp,
  GUEST_DEFAULTS,
  type GuestSettings,
  type HostExtras,
  installSessionHelper,
} from "../../mod/exec-guest/mod.ts";
import { guestArgs, gurtArgs, readToNewline, until, waitFor } from "../kit/mod.ts";

export { processAlive } from "../kit/mod.ts";

/** A guest under test: its URLs, its workspace, and how to stop it. */
export interface GuestUnderTest {
  exec: string;
  host: string;
  workspace: string;
  token: string;
  stop(): Promise<void>;
}

/** The daemon as a child process (`deno run main.ts guest`), with ports chosen by the kernel. */
export interface DaemonUnderTest extends GuestUnderTest {
  pid: number;
  /** Stops it with POST /v1/shutdown and returns its exit status and stderr. */
  shutdown(): Promise<{ code: number; stderr: string }>;
}

/** Starts `main.ts guest` with the given environment; resolves once it printed its addresses. */
export async function startDaemon(env: Record<string, string> = {}): Promise<DaemonUnderTest> {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "gurt-guest-ws-" }));
  const token = env.BOX_TOKEN ||
    (env.BOX_TOKEN_FILE
      ? Deno.readTextFileSync(env.BOX_TOKEN_FILE).trim()
      : "test-token-0123456789");
  const child = new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["guest", ...guestArgs(workspace)]),
    env: { BOX_TOKEN: token, ...env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const stderr = collect(child.stderr);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const text = await readToNewline(reader);
  if (!text.includes("\n")) {
    const status = await child.status;
    await Deno.remove(workspace, { recursive: true });
    throw new Error(`the guest exited with ${status.code}: ${await stderr}`);
  }
  const line = JSON.parse(text.slice(0, text.indexOf("\n")));
  let stopped: Promise<{ code: number; stderr: string }> | undefined;
  const shutdown = () => {
    stopped ??= (async () => {
      try {
        const response = await fetch(`${line.exec}/v1/shutdown`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
        });
        await response.body?.cancel();
      } catch {
        // Already gone (or going): make sure, then collect its status.
        try {
          child.kill("SIGKILL");
        } catch {
          // It had exited.
        }
      }
      const status = await child.status;
      await reader.cancel();
      const errors = await stderr;
      await Deno.remove(workspace, { recursive: true });
      return { code: status.code, stderr: errors };
    })();
    return stopped;
  };
  return {
    exec: line.exec,
    host: line.host,
    workspace,
    token,
    pid: child.pid,
    shutdown,
    stop: async () => {
      await shutdown();
    },
  };
}

/** Runs `main.ts guest` to its end (for refusals): exit status and stderr. */
export async function runDaemonToEnd(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["guest", ...args]),
    env,
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
    stdin: "null",
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

/** Both apps served in this process on kernel-chosen ports, with a fresh workspace. */
export async function startInProcess(
  overrides: Partial<GuestSettings> = {},
  options: { extras?: HostExtras; baseEnv?: Record<string, string> } = {},
): Promise<GuestUnderTest> {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "gurt-guest-ws-" }));
  // As `gurt guest` does; `sessionHelper: null` in the overrides tests util-linux setsid instead.
  const helper = overrides.sessionHelper === undefined ? await installSessionHelper() : null;
  const settings: GuestSettings = {
    ...GUEST_DEFAULTS,
    sessionHelper: helper?.path ?? null,
    filesHelper: helper?.files ?? null,
    execPort: 0,
    hostPort: 0,
    workspace,
    token: "test-token-0123456789",
    hostToken: "test-token-0123456789",
    corsOrigins: [],
    desktopRequired: false,
    ...overrides,
  };
  const exec = createExecApp({ settings, baseEnv: options.baseEnv ?? { PATH: "/usr/bin:/bin" } });
  const execServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    exec.app.fetch,
  );
  const endpoints = { exec: `http://127.0.0.1:${execServer.addr.port}`, host: "" };
  const host = createHostApp({ settings, endpoints }, options.extras);
  const hostServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    host.app.fetch,
  );
  endpoints.host = `http://127.0.0.1:${hostServer.addr.port}`;
  return {
    ...endpoints,
    workspace,
    token: settings.token,
    stop: async () => {
      await exec.close();
      await Promise.all([execServer.shutdown(), hostServer.shutdown()]);
      await Deno.remove(workspace, { recursive: true });
      await helper?.remove();
    },
  };
}

/** Runs `work` on a guest served in this process (startInProcess), stopped afterwards. */
export function withGuest(
  overrides: Partial<GuestSettings>,
  work: (guest: GuestUnderTest) => Promise<void>,
  options: { extras?: HostExtras; baseEnv?: Record<string, string> } = {},
): Promise<void> {
  return stoppedAfter(startInProcess(overrides, options), work);
}

/** Runs `work` on the daemon as a child process (startDaemon), stopped afterwards. */
export function withDaemon(
  env: Record<string, string>,
  work: (guest: DaemonUnderTest) => Promise<void>,
): Promise<void> {
  return stoppedAfter(startDaemon(env), work);
}

async function stoppedAfter<G extends GuestUnderTest>(
  started: Promise<G>,
  work: (guest: G) => Promise<void>,
): Promise<void> {
  const guest = await started;
  try {
    await work(guest);
  } finally {
    await guest.stop();
  }
}

/** A response read whole: status, headers, and the body as JSON (or text when not JSON). */
export interface Answer {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
  text: string;
}

/** Calls the guest with its bearer token; a JSON body is sent as application/json. */
export async function call(
  guest: { token: string },
  url: string,
  init: { method?: string; json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${guest.token}`,
    ...init.headers,
  };
  let body = init.body;
  if (init.json !== undefined) {
    headers["content-type"] ??= "application/json";
    body = JSON.stringify(init.json);
  }
  const response = await fetch(url, { method: init.method ?? "GET", headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** The live (non-zombie) processes of a process group. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") {
        members.push(Number(entry.name));
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return members;
}

/**
 * Waits until `check` holds, re-checking every millisecond for up to `ms`: a signal is delivered
 * asynchronously, so death is observed, not assumed. Whether it came to hold.
 */
export function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  return until(check, { ms, every: 1, what: "a process event" }).then(() => true, () => check());
}

/** Waits until a file exists and ends a line (the command under test writes it when ready). */
export async function fileAppears(path: string): Promise<string> {
  const text = await waitFor(
    () => Deno.readTextFile(path).then((text) => text.endsWith("\n") ? text : null, () => null),
    { ms: 15_000, every: 1, what: `${path} to appear` },
  );
  return text.trim();
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) text += chunk;
  return text;
}
