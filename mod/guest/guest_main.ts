/** The guest role's entry: reads its settings (in the role, with its permissions) and runs. */
import { createDesktop, desktopOff, type DesktopOptions } from "../cua/mod.ts";
import { type GuestFlags, GuestSettingsError, loadGuestSettings } from "../exec-guest/mod.ts";
import { runGuest } from "./daemon.ts";

/** What `gurt guest` hands the role: the exec guest's flags, and the desktop to run if any. */
export interface GuestArgs extends GuestFlags {
  /** `--desktop`: the X desktop and computer use to run beside the host service, or null. */
  desktop?: DesktopOptions | null;
  /**
   * The tokens `gurt guest` read before the role started (BOX_TOKEN, BOX_HOST_TOKEN), as values:
   * by then they are gone from the process's environment (mod/guest/self_guard.ts).
   */
  secrets?: Record<string, string>;
}

/** Runs `gurt guest` inside the guest role's Worker. */
export default async function main(flags: GuestArgs): Promise<number> {
  let settings;
  try {
    settings = loadGuestSettings(flags, {
      env: { ...Deno.env.toObject(), ...flags.secrets },
      readTextFile: (path) => Deno.readTextFileSync(path),
    });
  } catch (error) {
    if (!(error instanceof GuestSettingsError)) throw error;
    console.error(`gurt guest: ${error.message}`);
    return 1;
  }
  if (!flags.desktop) {
    // The desktop's routes still answer, saying there is no desktop, never 404.
    return await runGuest(settings, {
      mounts: desktopOff(Deno.env.toObject(), settings.workspace),
    });
  }
  const desktop = createDesktop(flags.desktop);
  try {
    await desktop.start();
  } catch (error) {
    await desktop.stop();
    console.error(
      `gurt guest: the desktop did not start (${
        error instanceof Error ? error.message : String(error)
      }); see runbook.md#desktop-display-unavailable`,
    );
    return 1;
  }
  try {
    return await runGuest(settings, {
      mounts: desktop.mounts(),
      desktopReady: () => desktop.ready(),
      capabilities: () => desktop.capabilities(),
    });
  } finally {
    await desktop.stop();
  }
}
