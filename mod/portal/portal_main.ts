/**
 * The portal role's entry (`gurt portal-serve`, started and watched by `gurt serve`): the owner's
 * pages and API on loopback, every read and act through the admin socket. It reads the owner token
 * and nothing else of the box home. It says where it listens with one line on stdout, which the
 * core turns into portal.addr, and stops on SIGTERM, on SIGINT, or when its stdin ends: the core
 * holds that pipe open for the portal's life, so a core that died takes the portal with it.
 */
import { readOwnerToken } from "./owner_token.ts";
import { PORTAL_CANNOT_LISTEN, PortalListenError, startPortal } from "./server.ts";

/** What `gurt portal-serve` gives the role. */
export interface PortalArgs {
  home: string;
  /** `[portal] listen` as the core read it. */
  listen: string;
  /** The admin socket. */
  socket: string;
}

/** The line a listening portal prints on stdout: `{"listening": "127.0.0.1:7780"}`. */
export interface ListeningLine {
  listening: string;
}

/** Serves until told to stop; exit status 3 if it cannot listen, 1 if it could not start otherwise. */
export default async function main(args: PortalArgs): Promise<number> {
  const stop = Promise.withResolvers<void>();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => stop.resolve());
  }
  void stdinEnded().then(() => stop.resolve());
  let portal;
  try {
    const token = await readOwnerToken(args.home);
    portal = await startPortal({
      listen: args.listen,
      socket: args.socket,
      token,
      log: (line) => console.error(line),
    });
  } catch (error) {
    console.error(`gurt portal: ${error instanceof Error ? error.message : String(error)}`);
    return error instanceof PortalListenError ? PORTAL_CANNOT_LISTEN : 1;
  }
  const line: ListeningLine = { listening: portal.addr };
  console.log(JSON.stringify(line));
  await stop.promise;
  await portal.close();
  return 0;
}

/** Resolves when stdin ends (or cannot be read). */
async function stdinEnded(): Promise<void> {
  try {
    for await (const _ of Deno.stdin.readable) {
      // Nothing is sent on it: it is only held open.
    }
  } catch {
    // A stdin that cannot be read has ended too.
  }
}
