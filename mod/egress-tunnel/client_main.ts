/** `gurt egress-tunnel`'s role entry: reads the token file, runs the client until a signal. */
import { runClient } from "./client.ts";

/** What `gurt egress-tunnel` hands its role. */
export interface EgressClientArgs {
  ws: string;
  tokenFile: string;
  allow: string[];
  denyPrivate: boolean;
}

/** Runs the laptop's end until SIGTERM or SIGINT. */
export default async function main(args: EgressClientArgs): Promise<number> {
  let token: string;
  try {
    token = (await Deno.readTextFile(args.tokenFile)).split("\n")[0].trim();
  } catch (error) {
    console.error(
      `gurt egress-tunnel: the token file ${args.tokenFile} could not be read (${
        (error as Error).message
      }); see runbook.md#egress-tunnel-cannot-attach`,
    );
    return 1;
  }
  if (token === "") {
    console.error(
      `gurt egress-tunnel: the token file ${args.tokenFile} is empty; ` +
        "see runbook.md#egress-tunnel-cannot-attach",
    );
    return 1;
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, onSignal);
  try {
    await runClient({ ...args, token, signal: stop.signal });
  } finally {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      Deno.removeSignalListener(signal, onSignal);
    }
  }
  return 0;
}
