/**
 * The MCP relay (`gurt mcp`): the task's tools for any MCP-speaking agent, over stdio. Its entry,
 * relay_main.ts, is the relay role's module (mod/roles/table.ts). This file loads nothing heavy:
 * `gurt mcp` reads it at start.
 */
export { askKey, CallKeys, canonical, mcpName, shortHash, toolName } from "./keys.ts";
export { DEFAULT_WAIT_MS, parseWaitMs, type RelayArgs } from "./relay_args.ts";
export {
  initializeAnswer,
  INVALID_PARAMS,
  LATEST_PROTOCOL_VERSION,
  type Method,
  type MethodCall,
  RpcError,
  serveLines,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./json_rpc.ts";
