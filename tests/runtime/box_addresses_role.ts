/**
 * A role entry for http_fetch_test.ts: reads the box's own addresses as http_fetch does, inside
 * whatever permissions the role was given. 0 if they include 127.0.0.1, 13 if Deno refused the
 * read with NotCapable, 1 otherwise.
 */
import { boxAddresses } from "../../mod/runtime/http_fetch.ts";

/** The role's main. */
export default function main(): Promise<number> {
  try {
    return Promise.resolve(boxAddresses().includes("127.0.0.1") ? 0 : 1);
  } catch (error) {
    return Promise.resolve(error instanceof Deno.errors.NotCapable ? 13 : 1);
  }
}
