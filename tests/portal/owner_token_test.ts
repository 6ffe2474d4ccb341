/**
 * The owner token is made once however many start at once (CI's failure at stop 41: the portal's
 * start read the token file the core had created and not yet written, and refused it as "not an
 * owner token"). Every caller gets the same whole token; no draft is left beside it.
 */
import { assertEquals } from "../assert.ts";
import { ensureOwnerToken } from "../../mod/portal/mod.ts";

Deno.test("twenty ensureOwnerToken calls at once on a fresh home all return the one token", async () => {
  for (let round = 0; round < 5; round++) {
    const home = await Deno.makeTempDir({ prefix: "gurt-token-" });
    try {
      const tokens = await Promise.all(
        Array.from({ length: 20 }, () => ensureOwnerToken(home)),
      );
      assertEquals(new Set(tokens).size, 1);
      assertEquals(/^[0-9a-f]{64}$/.test(tokens[0]), true);
      const names = [];
      for await (const entry of Deno.readDir(`${home}/portal`)) names.push(entry.name);
      assertEquals(names, ["owner.token"]);
      assertEquals((await Deno.stat(`${home}/portal/owner.token`)).mode! & 0o777, 0o600);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  }
});
