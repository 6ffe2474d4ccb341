/**
 * Apps: the owner's tools and MCP servers, installed in BOX_HOME/apps/<name>, their tools offered
 * to tasks as `<app>.<tool>` through the broker's one call path. The core is an MCP client of each
 * (the official SDK's Client); how an app's server is started in its sandbox is the core's
 * (mod/core/app_launch.ts).
 */
export {
  AppCatalog,
  type CatalogDeps,
  type InstalledApp,
  isEnabled,
  keptTools,
  secretProblem,
  TOOLS_FILE,
} from "./app_catalog.ts";
export {
  AppCallError,
  type AppConnection,
  AppRunner,
  IDEMPOTENCY_META,
  type RunnerState,
} from "./app_runner.ts";
export { type LeftOutTool, type ListedTool, type OfferedTool, offeredTools } from "./app_tools.ts";
export { type AppProcess, MAX_LINE_BYTES, ProcessTransport } from "./process_transport.ts";
export {
  appDir,
  AppInstallError,
  appsDir,
  type AppSource,
  parseNpmSource,
  placeApp,
  removeAppFolder,
} from "./app_install.ts";
export { type AppFile, BOX_FILES, readAppFolder } from "./app_folder.ts";
export { boxVerb, keptToolNames } from "./kept_names.ts";
export {
  appInstance,
  DISABLED_FILE,
  INSTANCE_FILE,
  isOwnerDisabled,
  loadApps,
} from "./app_load.ts";
export {
  APP_NAME,
  type AppManifest,
  appNameProblem,
  type AppPort,
  HOME_PLACEHOLDER,
  manifestHash,
  parseManifest,
  readManifest,
} from "./manifest.ts";
// The App SDK's shape for module apps (app_sdk.ts), its check (app_shape.ts), and the app-host
// role's entry (app_host.ts, named by mod/roles/table.ts).
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
