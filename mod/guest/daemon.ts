/**
 * The guest daemon: serves the exec and host services on their ports, prints the bound addresses
 * as one JSON line, and on POST /v1/shutdown (or SIGTERM/SIGINT) stops every exec and both
 * servers gracefully.
 */
import {
  createExecApp,
  createHostApp,
  type GuestSettings,
  type HostExtras,
} from "../exec-guest/mod.ts";

/** The line the daemon prints once both services listen. */
export interface ListeningLine {
  service: "gurt-guest";
  exec: string;
  host: string;
  workspace: string;
}

/** Runs the guest until it is told to shut down; resolves with the exit status. */
export async function runGuest(settings: GuestSettings, extras?: HostExtras): Promise<number> {
  let stop!: () => void;
  const stopping = new Promise<void>((resolve) => stop = resolve);
  const exec = createExecApp({ settings, onShutdown: () => stop() });
  const execServer = Deno.serve(
    { hostname: settings.bind, port: settings.execPort, onListen: () => {} },
    exec.app.fetch,
  );
  const endpoints = { exec: urlOf(settings.bind, execServer.addr.port), host: "" };
  const host = createHostApp({ settings, endpoints, onShutdown: () => stop() }, extras);
  const hostServer = Deno.serve(
    { hostname: settings.bind, port: settings.hostPort, onListen: () => {} },
    host.app.fetch,
  );
  endpoints.host = urlOf(settings.bind, hostServer.addr.port);
  const line: ListeningLine = {
    service: "gurt-guest",
    exec: endpoints.exec,
    host: endpoints.host,
    workspace: settings.workspace,
  };
  const signals = listenForSignals(() => stop());
  console.log(JSON.stringify(line));
  await stopping;
  signals();
  await exec.close();
  await host.close();
  await Promise.all([execServer.shutdown(), hostServer.shutdown()]);
  return 0;
}

/** A listen address as a loopback-reachable URL (0.0.0.0 and :: rewritten to loopback). */
export function urlOf(bind: string, port: number): string {
  if (bind === "0.0.0.0") return `http://127.0.0.1:${port}`;
  if (bind === "::") return `http://[::1]:${port}`;
  return bind.includes(":") ? `http://[${bind}]:${port}` : `http://${bind}:${port}`;
}

function listenForSignals(onSignal: () => void): () => void {
  const added: Deno.Signal[] = [];
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    try {
      Deno.addSignalListener(signal, onSignal);
      added.push(signal);
    } catch {
      // Signals may not be available where the guest runs; POST /v1/shutdown still works.
    }
  }
  return () => {
    for (const signal of added) Deno.removeSignalListener(signal, onSignal);
  };
}
