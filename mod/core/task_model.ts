/**
 * A task's model endpoint, as the core opens it: on tasks/<id>/model.sock (the task init opens it on
 * the task's loopback, MODEL_PORT), sending Anthropic and OpenAI requests to gurt.toml's [models]
 * anthropic_base_url and openai_base_url with the vault's ANTHROPIC_API_KEY or OPENAI_API_KEY in
 * place of the task's placeholder. Each answer's usage is charged to the task as a cost (audit log,
 * then journal), summed in fractions of a cent and charged a whole cent at a time (a charge the log
 * could not take stays owed; while the log takes nothing, no request is sent); each refused
 * request is a net_blocked record and a net.blocked journal event, like the egress proxy's. A task
 * at or past its budget has its next model request held for the owner (the broker's
 * admitModelRequest): refused, 403 in the service's format; still waiting, 429.
 */
import {
  type JournalLine,
  type ModelAdmission,
  type ModelRequestFacts,
  NANOCENTS,
} from "../broker/mod.ts";
import type { Config, ProviderConfig } from "../config/mod.ts";
import { PLACEHOLDER_KEY } from "../sandbox/mod.ts";
import type { TextRedaction } from "../vault/mod.ts";
import {
  type AdmitRefusal,
  KEY_NAMES,
  type ModelEndpoint,
  type ProviderTarget,
  serveModelEndpoint,
  type ServiceTarget,
  type UsageEvent,
} from "../model-proxy/mod.ts";

/** What the endpoint of one task needs from the core. */
export interface TaskModelOptions {
  task: string;
  socketPath: string;
  config: Config;
  /** A vault value by name, or undefined. */
  secret(name: string): string | undefined;
  /** Charges the task whole cents for a model's answers; `hold` names the request's hold. */
  charge(cost: { cents: number; model: string; hold?: string }): Promise<void>;
  /** Appends a line to the task's journal and syncs it (a hold, its settling). */
  journal(line: JournalLine): Promise<void>;
  /** The part of a cent of model spend the journal has not yet seen charged, in billionths. */
  carried(): number;
  /** Marks the task as holding a charge the audit log could not take (held_charges.ts). */
  unsettled(): Promise<void>;
  clock(): Date;
  /** Records a refusal: the net_blocked audit record of `place`, the journal event of `detail`. */
  blocked(place: { host: string; port: number; reason: string }, detail: unknown): Promise<void>;
  redaction(): TextRedaction;
  log(line: string): void;
  /** Draws a request body on the task's byte total: a sentence when it is spent, else null. */
  drawBytes(count: number): string | null;
  /** Lets a billed request on, or holds it for the owner while the task is over its budget. */
  admit(request: ModelRequestFacts, signal: AbortSignal): Promise<ModelAdmission>;
  /** Whether the audit log takes records now (false once a write failed, until restart). */
  auditable(): boolean;
  /** The task's steps so far, where its worker keeps its agent's session (`{agent: {session}}`). */
  steps(): readonly { data: unknown }[];
}

/** Opens a task's model endpoint. */
export async function openTaskModel(options: TaskModelOptions): Promise<ModelEndpoint> {
  const models = options.config.models;
  const meter = new CentMeter();
  meter.owe(options.carried());
  const now = () => options.clock().toISOString();
  const owed = async (hold: string, cents: number) => {
    await options.journal({ type: "model.owed", time: now(), hold, cents }).catch((error) =>
      options.log(
        `gurt: task ${options.task}: a model charge's cents were not journalled: ${error}`,
      )
    );
    await options.unsettled().catch((error) =>
      options.log(`gurt: task ${options.task}: a model charge was not marked unsettled: ${error}`)
    );
  };
  const target = (baseUrl: string, key: string): ServiceTarget => ({
    baseUrl,
    key: () => options.secret(key) ?? null,
  });
  const targets = {
    anthropic: target(models.anthropic_base_url, KEY_NAMES.anthropic),
    openai: target(models.openai_base_url, KEY_NAMES.openai),
    factory: target(models.factory_base_url, KEY_NAMES.factory),
  };
  return await serveModelEndpoint({
    socketPath: options.socketPath,
    services: { anthropic: targets.anthropic, openai: targets.openai },
    factory: targets.factory,
    providers: Object.entries(models.providers).map(([name, provider]) =>
      providerTarget(name, provider, options.secret)
    ),
    factorySessions: () => keptSessions(options.steps()),
    placeholder: PLACEHOLDER_KEY,
    prices: models.prices,
    holds: {
      open: async ({ service, model, path, cents }) => {
        const hold = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
        const line = {
          type: "model.hold" as const,
          time: now(),
          hold,
          service,
          model,
          path,
          cents,
        };
        await options.journal(line);
        return hold;
      },
      close: (hold) => options.journal({ type: "model.settled", time: now(), hold }),
    },
    onUsage: async (usage) => {
      // The exact account first (model_spend.ts): tokens, billionths of a cent, where the price
      // came from. The whole cents below are the audit's.
      await options.journal(usageLine(usage, now())).catch((error) =>
        options.log(
          `gurt: task ${options.task}: a model answer's usage was not journalled: ${error}`,
        )
      );
      const whole = meter.add(usage.nanocents);
      const hold = usage.hold;
      if (whole === 0) {
        // Less than a cent so far, carried to the next answer: nothing to record for this one.
        if (hold !== undefined) await options.journal({ type: "model.settled", time: now(), hold });
        return;
      }
      try {
        await options.charge({ cents: whole, model: usage.model, hold });
      } catch (error) {
        // Not written: owed. With a hold, its charge is recovered at the next start (with these
        // cents when the journal takes them); without one, charged with the next charge here.
        if (hold === undefined) meter.owe(whole * NANOCENTS);
        else await owed(hold, whole);
        throw error;
      }
    },
    auditable: options.auditable,
    onBlocked: async (event) => {
      const url = new URL(event.baseUrl ?? targets[event.service].baseUrl);
      const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
      await options.blocked({ host: url.hostname, port, reason: event.reason }, event);
    },
    redaction: options.redaction,
    log: options.log,
    drawBytes: options.drawBytes,
    admit: async (request, signal) => refusalOf(await options.admit(request, signal)),
    maxConcurrent: options.config.broker.max_model_requests,
    doors: {
      maxConnections: options.config.broker.door_connections,
      headerTimeoutMs: options.config.broker.header_timeout_ms,
    },
  });
}

/** One of gurt.toml's [models.providers] as the endpoint reaches it, its keys read from the vault. */
function providerTarget(
  name: string,
  provider: ProviderConfig,
  secret: (name: string) => string | undefined,
): ProviderTarget {
  return {
    name,
    api: provider.api,
    baseUrl: provider.base_url,
    keyName: provider.key,
    key: () => secret(provider.key) ?? null,
    keyHeader: provider.key_header,
    headers: () => {
      const headers: Record<string, string> = {};
      for (const [header, value] of Object.entries(provider.headers)) {
        if (typeof value === "string") {
          headers[header] = value;
          continue;
        }
        const held = secret(value.secret);
        if (held === undefined || held === "") return { missing: value.secret };
        headers[header] = value.format.replace("{secret}", () => held);
      }
      return { headers };
    },
    models: provider.models,
    reported: provider.prices === "reported",
  };
}

/** The model.usage journal line of an answer's usage. */
function usageLine(usage: UsageEvent, time: string): JournalLine {
  return {
    type: "model.usage",
    time,
    service: usage.service,
    ...(usage.provider === undefined ? {} : { provider: usage.provider }),
    model: usage.model,
    tokens: usage.tokens,
    nanocents: usage.nanocents,
    rates: usage.rates,
    ...(usage.cut === undefined ? {} : { cut: usage.cut }),
    ...(usage.hold === undefined ? {} : { hold: usage.hold }),
  };
}

/** The agent sessions the task's steps keep, to resume after a restart (agent_run_steps.ts). */
function keptSessions(steps: readonly { data: unknown }[]): string[] {
  const found: string[] = [];
  for (const { data } of steps) {
    const agent = typeof data === "object" && data !== null
      ? (data as { agent?: unknown }).agent
      : undefined;
    const session = typeof agent === "object" && agent !== null
      ? (agent as { session?: unknown }).session
      : undefined;
    if (typeof session === "string" && session !== "") found.push(session);
  }
  return found;
}

/** What the endpoint answers for an admission: nothing (send it), 403 or 429. */
function refusalOf(admission: ModelAdmission): AdmitRefusal | null {
  if (admission.kind === "admitted") return null;
  if (admission.kind === "refused") return { status: 403, message: admission.message };
  if (admission.kind === "waiting") return { status: 429, message: admission.message };
  // Its client has gone: no one reads this answer.
  return { status: 429, message: "gurt: the request's client left; see runbook.md#model-budget" };
}

/**
 * Billionths of a cent summed for one task, exactly (whole numbers); add() gives the whole cents
 * now due.
 */
class CentMeter {
  #owed = 0;

  add(nanocents: number): number {
    this.#owed += nanocents;
    const whole = Math.floor(this.#owed / NANOCENTS);
    this.#owed -= whole * NANOCENTS;
    return whole;
  }

  /** Puts back billionths of a cent: carried from before, or whole cents a charge could not write. */
  owe(nanocents: number): void {
    this.#owed += nanocents;
  }
}
