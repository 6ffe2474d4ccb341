/** Programs gurt checks in as bytes built from C: the checked-in bytes are what the source builds to. */
import { assert, assertEquals } from "../assert.ts";

const root = new URL("../../", import.meta.url).pathname;

/**
 * Fails unless `tools/<script>` builds the bytes `mod/<elf>` holds (its lines of bytes, not the
 * line naming the compiler's version); `what` names the program in the failure.
 */
export async function assertBuildsAsCheckedIn(
  built: { script: string; elf: string },
  what: string,
): Promise<void> {
  const out = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    const run = await new Deno.Command("bash", {
      args: [`${root}tools/${built.script}`, out],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(run.code, 0, new TextDecoder().decode(run.stderr));
    const bytes = (text: string) => text.split("\n").filter((line) => line.startsWith('  "'));
    const checkedIn = await Deno.readTextFile(`${root}mod/${built.elf}`);
    assert(bytes(checkedIn).length > 10, `the checked-in file holds the ${what}'s bytes`);
    assert(
      bytes(await Deno.readTextFile(out)).join() === bytes(checkedIn).join(),
      `${built.elf.split("/").pop()} is stale: run tools/${built.script}`,
    );
  } finally {
    await Deno.remove(out);
  }
}
