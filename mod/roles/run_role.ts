/** Runs a role's entry module in a Worker that holds only that role's permissions. */
import type { RoleName, RolePermissions } from "./types.ts";

/** One role to run: its name, its narrowed permissions, its entry module and what it is given. */
export interface RoleLaunch<A> {
  role: RoleName;
  permissions: RolePermissions;
  /** The entry module; its default export is a RoleMain. */
  entry: URL;
  /** Structured-cloneable arguments for the entry. */
  args: A;
  /** Objects in args that are moved to the role rather than copied, such as a MessagePort. */
  transfer?: Transferable[];
}

/**
 * Starts the role and resolves with its exit status. An error the role throws is printed as one
 * line and becomes status 1; a NotCapable error names the role whose permissions refused it.
 */
export function runRole<A>(launch: RoleLaunch<A>): Promise<number> {
  const worker = new Worker(new URL("./worker_entry.ts", import.meta.url), {
    type: "module",
    name: `gurt-${launch.role}`,
    deno: { permissions: launch.permissions },
  });
  return new Promise<number>((resolve) => {
    worker.onmessage = (event: MessageEvent<{ status: number }>) => {
      worker.terminate();
      resolve(event.data.status);
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      worker.terminate();
      const message = event.message.replace(/^Uncaught (\(in promise\) )?/, "");
      console.error(`gurt ${launch.role}: ${message}`);
      resolve(1);
    };
    worker.postMessage({ entry: launch.entry.href, args: launch.args }, launch.transfer ?? []);
  });
}
