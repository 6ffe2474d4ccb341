/** The guest daemon (`gurt guest`): seed 004's box-exec and box-host as two Hono services. */
export {
  createExecApp,
  createHostApp,
  type ExecAppOptions,
  GUEST_VERSION,
  type GuestService,
  type HostAppOptions,
  type HostExtras,
} from "./apps.ts";
export { runGuest, urlOf } from "./daemon.ts";
export { GuestError, type GuestErrorCode } from "./errors.ts";
export { type CapabilityState } from "./host_routes.ts";
export { type GuestEnv, newRouter } from "./middleware.ts";
export { guestOpenApiYaml, publishedOpenApiYaml } from "./openapi.ts";
export { guestPermissions, type GuestPlaces } from "./permissions.ts";
export { type InstalledHelper, installSessionHelper } from "./session_helper.ts";
export {
  GUEST_DEFAULTS,
  type GuestFlags,
  type GuestSettings,
  GuestSettingsError,
  loadGuestSettings,
  SECRET_ENV,
  tokenFilesIn,
} from "./settings.ts";

/** The guest role's entry module, for runRole. */
export const guestEntry: URL = new URL("./guest_main.ts", import.meta.url);
