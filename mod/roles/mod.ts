/**
 * Roles: each runs in its own Worker with exactly the permissions ROLE_TABLE (table.ts) gives it,
 * started by launchRole. Nothing else writes a role's permissions.
 */
export { type LaunchInput, launchRole } from "./launch.ts";
export { type RoleLaunch, runRole } from "./run_role.ts";
export {
  type AgentPlaces,
  type AppHostPlaces,
  type CorePlaces,
  desktopPermissionNeeds,
  type GuestPlaces,
  type OwnerPlaces,
  ROLE_TABLE,
  type RoleStart,
  type RoleTable,
  type TaskPlaces,
} from "./table.ts";
export { type PortalPlaces, type StandInPlaces } from "./loopback_roles.ts";
export { codeDir } from "../config/code_dir.ts";
export { type RoleMain, type RoleName, type RolePermissions } from "./types.ts";
