/** The MCP relay (`gurt mcp`): the task's tools for any MCP-speaking agent, over stdio. */
export { askKey, CallKeys, canonical, mcpName, shortHash, toolName } from "./keys.ts";
export type { RelayArgs } from "./relay_main.ts";
