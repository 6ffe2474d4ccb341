/** A role entry for the permission test: tries to read a path and reports how it went. */

/** 0: NotCapable; 3: the read succeeded; 4: another error. */
export default async function main(args: { path: string }): Promise<number> {
  try {
    await Deno.readTextFile(args.path);
    return 3;
  } catch (error) {
    return error instanceof Deno.errors.NotCapable ? 0 : 4;
  }
}
