/**
 * Kept for mod.ts's export list only, while another change to mod.ts is under way: the owner API
 * is in owner_api.ts, and the portal reaches the core with the admin socket's one client.
 */
export { adminPathOf } from "./owner_api.ts";

/** No longer used: the portal reaches the admin handlers over the socket (AdminClient). */
export type AdminFetch = (request: Request) => Response | Promise<Response>;
