/**
 * The worker's permissions (`gurt loop`, seed 002's loopd): one task's conversation with a model.
 * It reaches the box, and the model through the core's relay, only over its task socket. It reads
 * no vault, no grants and no audit log, and reaches no host.
 */
import type { RolePermissions } from "../roles/mod.ts";
import { codeDir } from "../roles/mod.ts";

/** The permissions of the worker of the task whose socket is `socket` (plus files it is given). */
export function workerPermissions(
  socket: string,
  options: { read?: string[] } = {},
): RolePermissions {
  return {
    read: [codeDir(), socket, ...(options.read ?? [])],
    write: [socket],
    net: [`unix:${socket}`],
    env: ["BOX_SOCKET", "BOX_TASK", "NO_COLOR"],
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}
