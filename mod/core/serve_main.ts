/** The core role's entry: `gurt serve` runs here, inside the core's permissions. */
import { type Config, vaultWhy } from "../config/mod.ts";
import { Core, logLine } from "./core.ts";
import { PortalProcess } from "./portal_process.ts";

/** What `gurt serve` passes to the core role. */
export interface ServeArgs {
  config: Config;
  acceptBreak: boolean;
}

/** Runs the core until SIGTERM or SIGINT, then shuts down cleanly. */
export default async function main(args: ServeArgs): Promise<number> {
  // Listen before anything else, so a SIGTERM any time after this point is a clean stop.
  const stop = Promise.withResolvers<void>();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => stop.resolve());
  }
  let core: Core;
  try {
    // Core.start checks the home's folders (and tightens loose modes), the ones the audit lock
    // needs first, the rest once it holds the lock; its notices say what changed.
    core = await Core.start(args.config, { acceptBreak: args.acceptBreak });
  } catch (error) {
    console.error(logLine(error instanceof Error ? error.message : String(error)));
    return exitStatusOf(error);
  }
  // A notice may name what a task left (a journal, a path): one line each, escaped as the log is.
  for (const notice of core.notices) console.error(logLine(notice));
  console.error(
    `gurt serve: vault ${args.config.vault} (${vaultWhy(args.config.vaultFrom)})`,
  );
  console.error(`gurt serve: box home ${args.config.home}; admin socket ready`);
  // The portal runs in its own process and role; the core restarts it whenever it dies.
  const portal = await PortalProcess.start({
    home: args.config.home,
    listen: args.config.portal.listen,
    listenSet: args.config.portalListenSet,
    log: core.deps.log,
  });
  await stop.promise;
  await portal?.close();
  await core.close();
  console.error("gurt serve: stopped");
  return 0;
}

function exitStatusOf(error: unknown): number {
  if (error instanceof Error && "exitStatus" in error && typeof error.exitStatus === "number") {
    return error.exitStatus;
  }
  return 1;
}
