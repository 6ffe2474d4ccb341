/** `gurt portal`'s link: the portal's address and a fresh one-time login code. */
import { portalAddrPath } from "../config/mod.ts";
import { loginCode, readOwnerToken } from "./owner_token.ts";

/** The one-time sign-in link for the portal of the home's running core. */
export async function loginLink(home: string, now: Date): Promise<string> {
  let addr: string;
  try {
    addr = (await Deno.readTextFile(portalAddrPath(home))).trim();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new Error(
      `${portalAddrPath(home)} does not exist: gurt serve is not running on this home, or its ` +
        "portal could not listen; start gurt serve and read its log; " +
        "see runbook.md#portal-listen-failed",
    );
  }
  const token = await readOwnerToken(home);
  return `http://${addr}/login?code=${loginCode(token, now)}`;
}
