/**
 * The stand-in role's entry (`gurt dev model-stand-in --port N`): serves the model stand-ins on a
 * loopback port until SIGINT or SIGTERM, printing its URL and one line per request.
 */
import { startStandIn } from "./stand_in.ts";

/** What the command line gives the role. */
export interface StandInArgs {
  hostname: string;
  port: number;
}

/** Serves until told to stop; exit status 1 if it cannot listen. */
export default async function main(args: StandInArgs): Promise<number> {
  const stop = new AbortController();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => stop.abort());
  }
  let url: string;
  try {
    ({ url } = await startStandIn({
      hostname: args.hostname,
      port: args.port,
      signal: stop.signal,
      log: (line) => console.error(`gurt dev model-stand-in: ${line}`),
    }));
  } catch (error) {
    console.error(
      `gurt dev model-stand-in: cannot listen on ${args.hostname}:${args.port}: ${
        (error as Error).message
      }`,
    );
    return 1;
  }
  console.log(url);
  console.error(
    `gurt dev model-stand-in: Anthropic Messages at ${url} (/v1/messages), OpenAI Responses and ` +
      `Chat Completions at ${url}/v1; any key is accepted; Ctrl-C stops it`,
  );
  await new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve()));
  return 0;
}
