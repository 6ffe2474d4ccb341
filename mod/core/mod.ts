/**
 * The core (`gurt serve`): the audit log, the tasks' sockets and workers, approvals, the admin
 * socket and the portal. It runs as the core role, whose permissions and entry module
 * (serve_main.ts) mod/roles/table.ts names; `gurt serve` needs only the type of its arguments, and
 * `gurt agent-run` how to start `gurt mcp` (gurtInvocation).
 */
export type { ServeArgs } from "./serve_main.ts";
export { gurtInvocation } from "./self_command.ts";
