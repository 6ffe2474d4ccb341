/** Roles: each runs in its own Worker with exactly the permissions written beside it. */
export { type RoleLaunch, runRole } from "./run_role.ts";
export { codeDir } from "../config/mod.ts";
export { type RoleMain, type RoleName, type RolePermissions } from "./types.ts";
