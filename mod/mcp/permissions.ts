/**
 * The MCP relay's permissions (`gurt mcp`): it forwards MCP calls from stdio to BOX_SOCKET and can
 * do nothing else.
 */
import type { RolePermissions } from "../roles/mod.ts";
import { codeDir } from "../roles/mod.ts";

/** The permissions of the relay for the task whose broker socket is `socket`. */
export function relayPermissions(socket: string): RolePermissions {
  return {
    read: [codeDir(), socket],
    write: [socket],
    net: [`unix:${socket}`],
    env: ["BOX_SOCKET", "BOX_TASK"],
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}
