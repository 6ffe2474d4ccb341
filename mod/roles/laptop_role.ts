/**
 * The permissions of the role that runs on the owner's own machine, not in the box: the laptop's
 * egress client. Split from table.ts, which names it.
 */
import { codeDir } from "../config/code_dir.ts";
import type { RolePermissions } from "./types.ts";

/** What the laptop client's permissions are computed from. */
export interface LaptopPlaces {
  /** `--token-file`. */
  tokenFile: string;
}

/**
 * The laptop's egress client (`gurt egress-tunnel`, docs/egress-tunnel.md), run by the owner on
 * their own machine: it reads its token file, and dials the guest's WebSocket and each host the
 * guest asks for. Net is whole because those hosts are any public host; its allow list and its
 * refusal of private addresses are checked in code, on the resolved address. It writes nothing,
 * runs nothing and reads no environment.
 */
export function egressClientPermissions(places: LaptopPlaces): RolePermissions {
  return {
    read: [codeDir(), places.tokenFile],
    write: false,
    net: true,
    env: false,
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}
