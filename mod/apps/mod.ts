/**
 * Apps (issue 29). The app host's part: the App SDK's shape for module apps (app_sdk.ts), its
 * check (app_shape.ts), and the app-host role's entry (app_host.ts, named by mod/roles/table.ts).
 */
export {
  type AppTool,
  type AppTools,
  IDEMPOTENCY_KEY_META,
  type InputSchema,
  SECRET_ENV_PREFIX,
  TOOL_NAME,
  type ToolContent,
  type ToolContext,
  type ToolResult,
} from "./app_sdk.ts";
export { AppModuleError, checkAppModule, type CheckedTool } from "./app_shape.ts";
export type { AppHostArgs } from "./app_host.ts";
