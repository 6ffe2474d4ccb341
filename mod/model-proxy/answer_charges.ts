/**
 * What the endpoint does about a billed request's cost: writes its hold before it is sent
 * (charge_holds.ts), settles a hold whose request ended with no usage, and prices and reports an
 * answer's usage (usage_event.ts), keeping each report that runs after its answer so the endpoint's
 * close waits for it.
 */
import type { AnswerUsage } from "./answer_usage.ts";
import { metered } from "./answer_usage.ts";
import { holdUnwrittenMessage, mostCents } from "./charge_holds.ts";
import type { ModelEndpointOptions } from "./proxy_events.ts";
import { errorAnswer } from "./service_errors.ts";
import { usageEvent, type UsageOf } from "./usage_event.ts";

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The holds, prices and usage reports of one endpoint's requests. */
export class AnswerCharges {
  readonly #options: Pick<ModelEndpointOptions, "holds" | "onUsage" | "prices">;
  readonly #clock: () => number;
  readonly #log: (line: string) => void;
  readonly #reports = new Set<Promise<unknown>>();

  constructor(
    options: Pick<ModelEndpointOptions, "holds" | "onUsage" | "prices">,
    at: { clock: () => number; log: (line: string) => void },
  ) {
    this.#options = options;
    this.#clock = at.clock;
    this.#log = at.log;
  }

  /** Resolves once every report under way has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#reports]);
  }

  /**
   * The hold of a billed request, written before it is sent: its id, null when there is none to
   * write, or the answer refusing the request when it could not be written.
   */
  async hold(
    usageOf: UsageOf,
    limits: { bodyBytes: number; most: number },
  ): Promise<string | null | Response> {
    const holds = this.#options.holds;
    if (holds === undefined || !metered(usageOf.kind)) return null;
    const { service, model, path } = usageOf;
    try {
      const cents = mostCents(usageOf, limits, this.#options.prices);
      return await holds.open({ service, model, path, cents });
    } catch (error) {
      this.#log(`gurt model endpoint: a request's hold could not be written: ${describe(error)}`);
      return errorAnswer(service, {
        error: "audit_unavailable",
        message: holdUnwrittenMessage(describe(error)),
      });
    }
  }

  /** Settles the hold of a request that ended with no usage to charge. */
  unhold(hold: string | null): void {
    if (hold === null) return;
    this.trail(
      this.#options.holds!.close(hold).catch((error) => {
        this.#log(`gurt model endpoint: a request's hold was not settled: ${describe(error)}`);
      }),
    );
  }

  /**
   * Prices and reports an answer's usage (`header` a cost its headers reported, `cut` how a stream
   * cut short is charged); a report that fails is logged, never thrown.
   */
  report(
    usageOf: UsageOf,
    usage: AnswerUsage,
    at: { hold: string | null; header: number | null; cut?: "reported" | "bound" },
  ): Promise<boolean> {
    const { hold, cut } = at;
    const said = { ...usage, reported: usage.reported ?? at.header };
    const priced = usageEvent(usageOf, said, this.#clock(), { owner: this.#options.prices, cut });
    if (priced === null) {
      this.unhold(hold);
      return Promise.resolve(true);
    }
    const event = hold === null ? priced : { ...priced, hold };
    const model = event.model;
    return this.#options.onUsage(event).then(() => true, (error) => {
      this.#log(
        `gurt model endpoint: the usage of a ${model} answer was not recorded: ${describe(error)}`,
      );
      return false;
    });
  }

  /** Keeps a report that runs after its answer has gone, so settled() waits for it. */
  trail(report: Promise<unknown>): void {
    this.#reports.add(report);
    report.finally(() => this.#reports.delete(report));
  }
}
