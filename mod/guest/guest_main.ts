/** The guest role's entry: reads its settings (in the role, with its permissions) and runs. */
import { createDesktop, type Desktop, desktopOff, type DesktopOptions } from "../cua/mod.ts";
import {
  type EgressSettings,
  egressSettingsFromEnv,
  type EgressTunnel,
  startEgressTunnel,
} from "../egress-tunnel/mod.ts";
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
  let egressSettings: EgressSettings | null;
  try {
    egressSettings = egressSettingsFromEnv(
      { ...Deno.env.toObject(), ...flags.secrets },
      settings.hostToken,
    );
  } catch (error) {
    console.error(`gurt guest: ${(error as Error).message}`);
    return 1;
  }
  let desktop: Desktop | null = null;
  let tunnel: EgressTunnel | null = null;
  if (egressSettings !== null) {
    try {
      // Only the desktop's Chromium may use the proxy; without --desktop it admits no one.
      tunnel = startEgressTunnel(egressSettings, () => desktop?.chromeGroup() ?? null);
    } catch (error) {
      console.error(
        `gurt guest: the egress tunnel could not listen (${
          (error as Error).message
        }); see runbook.md#egress-tunnel-not-attached`,
      );
      return 1;
    }
  }
  try {
    return await runWith(flags, settings, tunnel, (started) => desktop = started);
  } finally {
    await tunnel?.close();
  }
}

async function runWith(
  flags: GuestArgs,
  settings: ReturnType<typeof loadGuestSettings>,
  tunnel: EgressTunnel | null,
  started: (desktop: Desktop) => void,
): Promise<number> {
  const egress = tunnel === null ? undefined : () => tunnel.status();
  if (!flags.desktop) {
    // The desktop's routes still answer, saying there is no desktop, never 404.
    return await runGuest(settings, {
      mounts: desktopOff(Deno.env.toObject(), settings.workspace),
      egress,
    });
  }
  const options = tunnel === null
    ? flags.desktop
    : { ...flags.desktop, proxyServer: tunnel.proxyUrl };
  const desktop = createDesktop(options);
  started(desktop);
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
      egress,
    });
  } finally {
    await desktop.stop();
  }
}
