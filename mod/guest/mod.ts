/**
 * The guest (`gurt guest`): the exec guest's two services with the desktop and computer use
 * mounted on the host service, run as the guest role. What `gurt guest` needs to start the role
 * is here, so the command line talks to this module only.
 */
export { type DesktopOptions, desktopOptionsFromEnv } from "../cua/mod.ts";
export {
  GuestSettingsError,
  type InstalledHelper,
  installSessionHelper,
  tokenFilesIn,
} from "../exec-guest/mod.ts";
export { type GuardedStart, guardGuest } from "./self_guard.ts";
export { type ListeningLine, runGuest, urlOf } from "./daemon.ts";
export type { GuestArgs } from "./guest_main.ts";
export { guestOpenApiYaml, publishedOpenApiYaml } from "./openapi.ts";
