/** The one launcher: starts a command's role as the role table says. */
import { runRole } from "./run_role.ts";
import type { RoleStart } from "./table.ts";

/** What a command gives its role at start. */
export interface LaunchInput<P, A> {
  /** The places the role's permissions are computed from. */
  places: P;
  /** Structured-cloneable arguments for the entry. */
  args: A;
  /** Objects in args that are moved to the role rather than copied, such as a MessagePort. */
  transfer?: Transferable[];
}

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * Runs the role of one row of ROLE_TABLE, with that row's permissions for the places given, and
 * resolves with its exit status. A role that stops itself on SIGTERM and SIGINT gets a listener
 * here too, which keeps Deno from ending the whole process on the signal before the Worker's own
 * listener has run (which it sometimes does under load). It stays until the process exits, so that
 * what a command does after its role ends (the guest removes its helper) is not cut short.
 */
export async function launchRole<P, A>(
  start: RoleStart<P>,
  input: LaunchInput<P, A>,
): Promise<number> {
  const permissions = start.permissions(input.places);
  if (start.stopsOnSignal) {
    for (const signal of SIGNALS) Deno.addSignalListener(signal, keepRunning);
  }
  return await runRole({
    role: start.role,
    permissions,
    entry: start.entry,
    args: input.args,
    transfer: input.transfer,
  });
}

/** Does nothing: its being there keeps the process from ending on the signal. */
function keepRunning(): void {}
