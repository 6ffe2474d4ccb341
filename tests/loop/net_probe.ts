/** A role entry for tests: fetches one URL and reports the outcome as the exit status. */

/** 0 if the fetch got an answer, 13 if Deno refused it with NotCapable, 1 for any other error. */
export default async function main(args: { url: string }): Promise<number> {
  try {
    await (await fetch(args.url)).body?.cancel();
    return 0;
  } catch (error) {
    return error instanceof Deno.errors.NotCapable ? 13 : 1;
  }
}
