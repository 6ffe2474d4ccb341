/** A role entry for tests: tries one act and reports its outcome as the exit status. */

/** The act to try. */
export interface ProbeArgs {
  act: "read" | "write" | "net" | "tcp" | "env" | "run";
  target: string;
}

/** 0 if the act succeeded, 13 if Deno refused it with NotCapable, 1 for any other error. */
export default async function main(args: ProbeArgs): Promise<number> {
  try {
    if (args.act === "read") await Deno.readFile(args.target);
    if (args.act === "write") await Deno.writeTextFile(args.target, "probe");
    if (args.act === "net") (await Deno.connect({ path: args.target, transport: "unix" })).close();
    if (args.act === "tcp") {
      const [hostname, port] = args.target.split(/:(?=\d+$)/);
      (await Deno.connect({ hostname, port: Number(port) })).close();
    }
    if (args.act === "env") Deno.env.get(args.target);
    if (args.act === "run") await new Deno.Command(args.target).output();
    return 0;
  } catch (error) {
    return error instanceof Deno.errors.NotCapable ? 13 : 1;
  }
}
