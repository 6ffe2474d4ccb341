/** What every role shares: its name, its permissions as data, and how it is entered. */

/** The roles (README.md#roles), one per subcommand family. */
export type RoleName =
  | "core"
  | "worker"
  | "relay"
  | "app-host"
  | "cli"
  | "guest"
  | "portal"
  | "stand-in"
  | "egress-client";

/**
 * Deno permissions for one role, written out in full: every kind is named, so a reader sees what
 * the role can touch without knowing Deno's defaults. `false` means none of that kind.
 */
export interface RolePermissions {
  read: string[] | false;
  write: string[] | false;
  net: string[] | boolean;
  env: string[] | boolean;
  run: string[] | boolean;
  sys: SysKind[] | boolean;
  ffi: false;
  import: false;
}

/** A kind of system information a role may read (Deno.osRelease, Deno.hostname, ...). */
export type SysKind = NonNullable<Deno.SysPermissionDescriptor["kind"]>;

/** A role's entry module exports this as its default: it runs and returns the exit status. */
export type RoleMain<A> = (args: A) => Promise<number>;
