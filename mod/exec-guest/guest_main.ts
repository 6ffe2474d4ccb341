/** The guest role's entry: reads its settings (in the role, with its permissions) and runs. */
import { runGuest } from "./daemon.ts";
import { type GuestFlags, GuestSettingsError, loadGuestSettings } from "./settings.ts";

/** Runs `gurt guest` inside the guest role's Worker. */
export default async function main(flags: GuestFlags): Promise<number> {
  let settings;
  try {
    settings = loadGuestSettings(flags, {
      env: Deno.env.toObject(),
      readTextFile: (path) => Deno.readTextFileSync(path),
    });
  } catch (error) {
    if (!(error instanceof GuestSettingsError)) throw error;
    console.error(`gurt guest: ${error.message}`);
    return 1;
  }
  return await runGuest(settings);
}
