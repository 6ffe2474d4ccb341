/** Whether a process or a process group exists, for the guest's execs and its session helper. */

/**
 * Whether a process (a pid), or a process group (a negative pid), exists: signal 0. EPERM means it
 * exists and belongs to another user.
 */
export function processExists(pid: number): boolean {
  try {
    // Signal 0 checks without signalling; Deno's Signal type does not list it.
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (error) {
    return error instanceof Deno.errors.PermissionDenied;
  }
}
