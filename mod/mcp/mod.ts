/** The MCP relay (`gurt mcp`): the task's tools for any MCP-speaking agent, over stdio. */
export { askKey, CallKeys, canonical, mcpName, shortHash, toolName } from "./keys.ts";
export { relayPermissions } from "./permissions.ts";
export type { RelayArgs } from "./relay_main.ts";

/** The relay's entry module, for runRole. */
export const relayEntry: URL = new URL("./relay_main.ts", import.meta.url);
