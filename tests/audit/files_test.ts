/** readShared reads a whole file into shared memory, as Deno.readFile reads it into its own. */
import { readShared } from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { withHome } from "./helpers.ts";

Deno.test("readShared gives what Deno.readFile gives, in a SharedArrayBuffer, at any size", async () => {
  await withHome(async (home) => {
    for (const size of [0, 1, 4095, 4096, 70_000]) {
      const path = `${home}/file-${size}`;
      const content = new Uint8Array(size).map((_, i) => (i * 31 + size) % 256);
      await Deno.writeFile(path, content);
      const shared = await readShared(path);
      assert(shared.buffer instanceof SharedArrayBuffer, "not in shared memory");
      assertEquals(new Uint8Array(shared), await Deno.readFile(path));
    }
  });
});
