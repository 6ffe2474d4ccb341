/**
 * A task's egress proxy, as the core opens it: on tasks/<id>/egress.sock (the task init opens it on
 * the task's loopback), with the task's own host list and gurt.toml's [egress], and every refusal
 * written as a net_blocked audit record and a `net.blocked` event in the task's journal. A task that
 * floods the proxy with refused connections gets at most BLOCKED_BURST records at once and then
 * BLOCKED_PER_SECOND a second; past that its refusals are counted, not written, and the core's log
 * says how many were left out.
 */
import type { Config } from "../config/mod.ts";
import { type EgressServer, serveEgress, type TunnelTaker } from "../egress/mod.ts";

/** The refusals a task may have recorded at once, and then each second. */
export const BLOCKED_BURST = 50;
export const BLOCKED_PER_SECOND = 5;

/** What the proxy of one task needs from the core. */
export interface TaskEgressOptions {
  task: string;
  socketPath: string;
  config: Config;
  /** The task's own host list, read for every connection. */
  hosts(): readonly string[];
  /** Records a refusal: the net_blocked audit record of `place`, the journal event of `detail`. */
  blocked(place: { host: string; port: number; reason: string }, detail: unknown): Promise<void>;
  log(line: string): void;
  clock(): Date;
  /**
   * For [egress] unknown = "ask": asks the owner whether the task may reach `host:port`, held up to
   * the approval wait; true lets this connection on.
   */
  ask(host: string, port: number): Promise<boolean>;
  /** The tunnels the box answers itself (the model services' HTTPS), as serveEgress takes them. */
  intercept?(host: string, port: number): TunnelTaker | null;
  /** Whether a plain request head carries a credential placeholder of the task's (refused). */
  carriesCredential?(head: string): boolean;
}

/** Opens a task's egress proxy. */
export async function openTaskEgress(options: TaskEgressOptions): Promise<EgressServer> {
  const egress = options.config.egress;
  const bucket = new RefusalBucket(options.clock);
  return await serveEgress({
    socketPath: options.socketPath,
    policy: () => ({
      hosts: [...options.hosts(), ...egress.hosts],
      allowPrivate: egress.allow_private_hosts,
      resolve: egress.resolve,
      unknown: egress.unknown,
    }),
    ask: (host, port) => options.ask(host, port),
    intercept: options.intercept === undefined
      ? undefined
      : (host, port) => options.intercept!(host, port),
    carriesCredential: options.carriesCredential,
    ownAddresses: () => Deno.networkInterfaces().map((face) => face.address),
    onBlocked: async (event) => {
      const left = bucket.take();
      if (left === null) return;
      if (left > 0) {
        options.log(
          `gurt: task ${options.task}: ${left} more refused connections were not recorded (more than ${BLOCKED_PER_SECOND} a second)`,
        );
      }
      await options.blocked(event, event);
    },
  });
}

/**
 * A token bucket of refusal records: take() is null when this refusal is not to be recorded, else
 * the count of refusals left out since the last one recorded.
 */
class RefusalBucket {
  #tokens = BLOCKED_BURST;
  #at: number;
  #dropped = 0;

  constructor(readonly clock: () => Date) {
    this.#at = clock().getTime();
  }

  take(): number | null {
    const now = this.clock().getTime();
    this.#tokens = Math.min(
      BLOCKED_BURST,
      this.#tokens + ((now - this.#at) / 1000) * BLOCKED_PER_SECOND,
    );
    this.#at = now;
    if (this.#tokens < 1) {
      this.#dropped++;
      return null;
    }
    this.#tokens--;
    const dropped = this.#dropped;
    this.#dropped = 0;
    return dropped;
  }
}
