/**
 * The core (`gurt serve`): the audit log, the tasks' sockets and workers, approvals, the admin
 * socket and the portal. Other modules start it as a role and need only its permissions and its
 * entry; `gurt serve` loads this file before the role starts, so it loads nothing more.
 */
export { corePermissions } from "./permissions.ts";

/** The core role's entry module, for runRole. */
export const serveEntry: URL = new URL("./serve_main.ts", import.meta.url);
