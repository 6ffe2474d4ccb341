/** The core role's entry: `gurt serve` runs here, inside the core's permissions. */
import { adminSocketPath, type Config, portalAddrPath } from "../config/mod.ts";
import { ensureOwnerToken, type Portal, startPortal } from "../portal/mod.ts";
import { Core } from "./core.ts";

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
    console.error(error instanceof Error ? error.message : String(error));
    return exitStatusOf(error);
  }
  for (const notice of core.notices) console.error(notice);
  console.error(`gurt serve: box home ${args.config.home}; admin socket ready`);
  const portal = await openPortal(core, args.config.portal.listen);
  await stop.promise;
  await portal?.close();
  await core.close();
  console.error("gurt serve: stopped");
  return 0;
}

/** Starts the owner's portal; the core keeps running without it if it cannot listen. */
async function openPortal(core: Core, listen: string): Promise<Portal | null> {
  const home = core.deps.home;
  try {
    const token = await ensureOwnerToken(home);
    const portal = await startPortal({ listen, socket: adminSocketPath(home), token });
    await Deno.writeTextFile(portalAddrPath(home), `${portal.addr}\n`, { mode: 0o644 });
    console.error(`gurt serve: portal at http://${portal.addr}; gurt portal prints a sign-in link`);
    return {
      ...portal,
      async close() {
        await portal.close();
        await Deno.remove(portalAddrPath(home)).catch(() => {});
      },
    };
  } catch (error) {
    console.error(
      `gurt serve: the portal is off: ${error instanceof Error ? error.message : error}`,
    );
    return null;
  }
}

function exitStatusOf(error: unknown): number {
  if (error instanceof Error && "exitStatus" in error && typeof error.exitStatus === "number") {
    return error.exitStatus;
  }
  return 1;
}
