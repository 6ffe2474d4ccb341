/**
 * The exec guest: its two services (docs/guest-api.md#two-services) as Hono apps (exec and files;
 * ready, info and the mounts of the desktop) and their settings. mod/guest runs them, and
 * mod/roles/table.ts writes the guest role's permissions.
 */
export {
  createExecApp,
  createHostApp,
  type ExecAppOptions,
  GUEST_VERSION,
  type GuestService,
  type HostAppOptions,
  type HostExtras,
} from "./apps.ts";
export { GuestError, type GuestErrorCode } from "./errors.ts";
export { ErrorBody } from "./exec_schemas.ts";
export { type CapabilityState, type EgressState } from "./host_routes.ts";
export { Jail, type Resolved } from "./jail.ts";
export { type GuestEnv, newRouter, validationHook } from "./middleware.ts";
export { type InstalledHelper, installSessionHelper } from "./session_helper.ts";
export {
  GUEST_DEFAULTS,
  type GuestFlags,
  type GuestSettings,
  GuestSettingsError,
  loadGuestSettings,
  readSecret,
  SECRET_ENV,
  type SettingsSources,
  tokenFilesIn,
} from "./settings.ts";
