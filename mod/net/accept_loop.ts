/**
 * An accept loop that outlives running out of file descriptors. When accept fails with EMFILE or
 * ENFILE the connection stays in the socket's queue; the loop waits a moment and tries again, so
 * every door goes on serving the connections it has and takes new ones as soon as descriptors
 * are free. The core logs one line when accepting starts failing and one when it works again,
 * however many doors were refused meanwhile.
 */

/** What acceptConnections needs besides the listener. */
export interface AcceptOptions {
  /** What the door is, for the log line ("task t1's broker socket"). */
  name: string;
  /** True once the door is closing: the loop ends. */
  stopped(): boolean;
  /** Takes one accepted connection. */
  take(conn: Deno.Conn): void;
  /** Where the two log lines go; stderr by default. */
  log?(line: string): void;
}

const EXHAUSTED = /\(os error (23|24)\)|EMFILE|ENFILE/;
const EXHAUSTED_PAUSE_MS = 100;

/** Process-wide: whether accepting has failed for want of descriptors and not worked since. */
const exhaustion = { on: false, refused: 0 };

/** Accepts connections on `listener` until it is closed or `options.stopped()`. */
export async function acceptConnections(
  listener: Deno.Listener,
  options: AcceptOptions,
): Promise<void> {
  const log = options.log ?? ((line: string) => console.error(line));
  while (!options.stopped()) {
    let conn: Deno.Conn;
    try {
      conn = await listener.accept();
    } catch (error) {
      if (options.stopped() || error instanceof Deno.errors.BadResource) return;
      if (error instanceof Deno.errors.Interrupted) return;
      if (EXHAUSTED.test(describe(error))) {
        exhausted(options.name, log);
        await new Promise((resolve) => setTimeout(resolve, EXHAUSTED_PAUSE_MS));
      }
      continue;
    }
    if (exhaustion.on) recovered(log);
    options.take(conn);
  }
}

function exhausted(name: string, log: (line: string) => void): void {
  exhaustion.refused++;
  if (exhaustion.on) return;
  exhaustion.on = true;
  log(
    "gurt: the core has run out of file descriptors: new connections wait until some close " +
      `(first refused at ${name}); see runbook.md#descriptors-exhausted`,
  );
}

function recovered(log: (line: string) => void): void {
  exhaustion.on = false;
  log(
    `gurt: the core accepts connections again (accepting failed ${exhaustion.refused} times ` +
      "for want of file descriptors); see runbook.md#descriptors-exhausted",
  );
  exhaustion.refused = 0;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
