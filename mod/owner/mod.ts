/**
 * The owner CLI role: what `gurt approvals`, `approve`, `refuse`, `task …`, `vault …`, `app …`, `grants …`,
 * `audit …`, `tools`, `config` and `portal` do once started, each in a Worker that holds only the CLI role's
 * permissions. mod/cli parses the command and starts the role; the entry modules here are named in
 * mod/roles/table.ts, and other modules need only their arguments' types.
 */
export type { AppArgs } from "./app_main.ts";
export type { ApprovalsArgs } from "./approvals_main.ts";
export type { AuditArgs } from "./audit_main.ts";
export type { GrantsJob, KeptToolList } from "./grants_main.ts";
export type { TaskArgs } from "./task_main.ts";
export type { ToolsArgs } from "./tools_main.ts";
export type { UsageArgs } from "./usage_main.ts";
export type { VaultArgs } from "./vault_main.ts";
export type { WatchArgs } from "./watch_main.ts";
