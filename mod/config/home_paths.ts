/**
 * The places in the box home that more than one role names: the admin socket, each task's folder
 * and socket, and the portal's files. Every role takes these paths from here.
 */

/** The admin socket (in run/owner-broker, a 0700 folder). */
export function adminSocketPath(home: string): string {
  return `${home}/run/owner-broker/admin.sock`;
}

/** The folder of task `id`. */
export function taskDir(home: string, id: string): string {
  return `${home}/tasks/${id}`;
}

/** Task `id`'s broker socket, in its folder. */
export function taskSocketPath(home: string, id: string): string {
  return `${taskDir(home, id)}/broker.sock`;
}

/** The folder of the portal's files. */
export function portalDir(home: string): string {
  return `${home}/portal`;
}

/** The owner token file (0600), which `gurt portal` turns into one-time login codes. */
export function ownerTokenPath(home: string): string {
  return `${portalDir(home)}/owner.token`;
}

/** The file where `gurt serve` writes the portal's bound address (`127.0.0.1:7780`). */
export function portalAddrPath(home: string): string {
  return `${home}/run/portal.addr`;
}
