/**
 * A task's model endpoint on its own Unix socket (tasks/<id>/model.sock, bridged into the task's
 * network namespace on 127.0.0.1:4100). It speaks the services' own wire formats in plain HTTP/1.1:
 * Anthropic Messages, and OpenAI Responses and Chat Completions. For each request it checks the
 * body (nothing the service would fetch for the task), drops the client's placeholder credentials,
 * puts the vault's key where the service reads it, relays the answer as it comes (a stream event
 * by event, never held whole), and reports the tokens the answer used, priced exactly.
 */
import { type GuardedServer, serveGuarded } from "../net/mod.ts";
import { notRelayedAnswer } from "./not_relayed.ts";
import type { ModelEndpoint, ModelEndpointOptions, ServiceTarget } from "./proxy_events.ts";
import { admitAnswer, type AdmitRequest } from "./admission.ts";
import { type AnswerOptions, redactingAnswerStream } from "./stream_redaction.ts";
import { meteredStream } from "./answer_stream.ts";
import { cutShort, DEFAULT_MOST_OUTPUT, metered, StreamUsage } from "./answer_usage.ts";
import { type BodyLimits, checkedBody } from "./request_body.ts";
import {
  createdSession,
  factoryRefusedMessage,
  factoryRoute,
  factorySessionMessage,
} from "./factory_paths.ts";
import { plainAnswer } from "./plain_relay.ts";
import { answerHeaders, carriesPlaceholder, serviceHeaders } from "./relay_headers.ts";
import { providerOf, providerSend, type ProviderTarget } from "./provider_routes.ts";
import { hasJsonBody, type Route, type RouteKind, routeOf, type Service } from "./routes.ts";
import {
  auditDownMessage,
  busyMessage,
  errorAnswer,
  noKeyMessage,
  unreachableMessage,
} from "./service_errors.ts";
import type { UsageOf } from "./usage_event.ts";
import { ownerFree, reportedNanocents } from "./prices.ts";
import { AnswerCharges } from "./answer_charges.ts";
import { wholeAnswer } from "./whole_answer.ts";

/** The event format each streaming route's answers are redacted by. */
const STREAM_FORMATS: Partial<Record<RouteKind, AnswerOptions["kind"]>> = {
  messages: "anthropic",
  chat_completions: "openai",
  responses: "responses",
};

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Starts a task's model endpoint on `options.socketPath`. */
export async function serveModelEndpoint(options: ModelEndpointOptions): Promise<ModelEndpoint> {
  try {
    if ((await Deno.lstat(options.socketPath)).isSocket) await Deno.remove(options.socketPath);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const proxy = new TaskEndpoint(options);
  await proxy.listen();
  return proxy;
}

class TaskEndpoint implements ModelEndpoint {
  readonly #options: ModelEndpointOptions;
  readonly #closing = new AbortController();
  /** Rejects once the endpoint is closing. */
  readonly #closingNow: Promise<never>;
  readonly #charges: AnswerCharges;
  /** The Factory sessions this task made through the endpoint. */
  readonly #sessions = new Set<string>();
  readonly #most: number;
  readonly #maxBody: number;
  readonly #drawBytes: (count: number) => string | null;
  readonly #clock: () => number;
  readonly #log: (line: string) => void;
  readonly #bodyLimits: BodyLimits;
  #server: GuardedServer | null = null;
  #active = 0;
  #closed = false;

  constructor(options: ModelEndpointOptions) {
    this.#options = options;
    this.#most = options.maxConcurrent ?? 4;
    this.#maxBody = options.maxBodyBytes ?? 20 * 1024 * 1024;
    this.#drawBytes = options.drawBytes ?? (() => null);
    this.#clock = options.clock ?? Date.now;
    this.#log = options.log ?? ((line) => console.error(line));
    this.#charges = new AnswerCharges(options, { clock: this.#clock, log: this.#log });
    const signal = this.#closing.signal;
    this.#closingNow = new Promise<never>((_, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    this.#closingNow.catch(() => {});
    this.#bodyLimits = {
      maxBody: this.#maxBody,
      closing: this.#closingNow,
      closed: () => signal.aborted,
      drawBytes: this.#drawBytes,
      onBlocked: options.onBlocked,
      log: this.#log,
    };
  }

  get socketPath(): string {
    return this.#options.socketPath;
  }

  get active(): number {
    return this.#active;
  }

  async listen(): Promise<void> {
    this.#server = serveGuarded(
      { path: this.#options.socketPath },
      (request) => this.#handle(request),
      {
        name: `the model endpoint at ${this.#options.socketPath}`,
        ...this.#options.doors,
        log: this.#log,
        // Called for an answer's stream that broke off (its client sees the answer cut short).
        onError: (error) => {
          if (!this.#closing.signal.aborted) {
            this.#log(`gurt model endpoint: an answer broke off: ${describe(error)}`);
          }
          return new Response(null, { status: 502 });
        },
      },
    );
    await Deno.chmod(this.#options.socketPath, 0o600);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort(new Error("the model endpoint is closing"));
    // Closes every connection, where shutdown() would wait for a client that never finishes
    // sending its body.
    await this.#server?.close();
    await this.#charges.settled();
    await Deno.remove(this.#options.socketPath).catch(() => {});
  }

  tunnelRequest(request: Request, service: Service): Promise<Response> {
    if (this.#closed) return Promise.resolve(new Response(null, { status: 503 }));
    return this.#handle(request, { service });
  }

  async factoryRequest(request: Request): Promise<Response> {
    if (this.#closed) return new Response(null, { status: 503 });
    const url = new URL(request.url);
    const factory = this.#options.factory;
    const found = factoryRoute(request.method, url.pathname);
    if (found.kind === "model" && factory !== undefined) {
      return await this.#handle(request, {
        service: found.route.service,
        factory,
        route: found.route,
      });
    }
    if (found.kind === "plain" && factory !== undefined) return await this.#plain(request, factory);
    const path = url.pathname.slice(0, 200);
    // A session the task made or kept; any, without Factory's key (then nothing goes to Factory).
    const own = (id: string | null) =>
      id === null || (factory?.key() ?? "") === "" || this.#sessions.has(id) ||
      (this.#options.factorySessions?.() ?? []).includes(id);
    if (found.kind === "session" && factory !== undefined && own(found.id)) {
      return await this.#plain(request, factory, found.id === null);
    }
    // Another session's copy is answered as Factory answers one that is not there (Droid goes on).
    const session = found.kind === "session";
    const reason = session ? "factory_session" : "factory_path";
    await this.#options.onBlocked({ service: "factory", path, reason, at: "" })
      .catch((error) =>
        this.#log(`gurt model endpoint: a refusal could not be reported: ${describe(error)}`)
      );
    return errorAnswer("openai", {
      error: session ? "not_found" : "refused",
      message: (session ? factorySessionMessage : factoryRefusedMessage)(request.method, path),
    });
  }

  /** A Factory request relayed as it is; `creates` a session, whose id becomes the task's. */
  async #plain(request: Request, factory: ServiceTarget, creates = false): Promise<Response> {
    if (this.#options.auditable?.() === false) {
      return errorAnswer("openai", {
        error: "audit_unavailable",
        message: auditDownMessage("sent"),
      });
    }
    if (this.#active >= this.#most) {
      return errorAnswer("openai", { error: "busy", message: busyMessage(this.#most) });
    }
    this.#active++;
    try {
      return await plainAnswer(request, {
        target: factory,
        placeholder: this.#options.placeholder ?? "",
        maxBodyBytes: this.#maxBody,
        drawBytes: this.#drawBytes,
        redaction: this.#options.redaction,
        signal: this.#closing.signal,
        // A body that names no id adds "", which no session path's id is.
        sending: creates ? (body) => this.#sessions.add(createdSession(body) ?? "") : undefined,
      });
    } finally {
      this.#active--;
    }
  }

  async #handle(
    request: Request,
    via: { service?: Service; factory?: ServiceTarget; route?: Route } = {},
  ): Promise<Response> {
    const url = new URL(request.url);
    const route = via.route ?? routeOf({
      method: request.method,
      path: url.pathname,
      headers: request.headers,
      service: via.service,
    });
    // Refused before its body is read: a task may not hold more of the endpoint than this.
    if (this.#active >= this.#most) {
      return errorAnswer(route.service, { error: "busy", message: busyMessage(this.#most) });
    }
    this.#active++;
    if (route.kind === null) {
      const limits = { most: this.#maxBody, draw: this.#drawBytes, closing: this.#closingNow };
      try {
        return await notRelayedAnswer(
          request,
          { service: route.service, path: url.pathname },
          limits,
        );
      } finally {
        this.#active--;
      }
    }
    let held = true;
    const release = () => {
      if (held) this.#active--;
      held = false;
    };
    try {
      return await this.#relay(request, {
        route,
        url,
        release,
        tunnel: via.service !== undefined,
        target: via.factory,
      });
    } catch (error) {
      release();
      // The client went away, or the endpoint is closing: no one reads this answer.
      if (!request.signal.aborted && !this.#closing.signal.aborted) {
        this.#log(`gurt model endpoint: a request to ${url.pathname} failed: ${describe(error)}`);
      }
      const base = (via.factory ?? this.#options.services[route.service]).baseUrl;
      return errorAnswer(route.service, {
        error: "unreachable",
        message: unreachableMessage(base, `could not be sent the request (${describe(error)})`),
      });
    }
  }

  /** Checks and sends one request; `release` is called once its answer has ended. */
  async #relay(
    request: Request,
    at: { route: Route; url: URL; release: () => void; tunnel: boolean; target?: ServiceTarget },
  ): Promise<Response> {
    const { route, url, release } = at;
    const service = route.service;
    const kind = route.kind!;
    const started = this.#clock();
    const target = at.target ?? this.#options.services[service];
    const placeholder = this.#options.placeholder ?? "";
    // Through the box's TLS, a client's own credential needs no key of the vault's.
    const ownCredential = at.tunnel && !carriesPlaceholder(request.headers, placeholder);
    const key = ownCredential ? "" : target.key();
    // A request its model sends to a provider of the owner's has its key found once it is read.
    const providers = at.tunnel || at.target !== undefined ? [] : this.#options.providers ?? [];
    const noKey = !ownCredential && (key === null || key === "");
    if (noKey && providers.length === 0) {
      release();
      const named = at.target === undefined ? service : "factory";
      return errorAnswer(service, { error: "no_key", message: noKeyMessage(named) });
    }
    let body: Uint8Array<ArrayBuffer> | undefined;
    let model: string | null = null;
    let choices = 1;
    let most: number | null = null;
    const picked: { provider?: ProviderTarget; model?: string } = {};
    if (hasJsonBody(kind)) {
      const sendModel = providers.length === 0 ? undefined : (named: string) => {
        const found = providerOf(named, providers);
        picked.provider = found?.provider;
        picked.model = found?.model;
        return found?.model ?? named;
      };
      const baseUrl = () => picked.provider?.baseUrl;
      const route = { service, kind, path: url.pathname, sendModel, baseUrl };
      const checked = await checkedBody(request, route, this.#bodyLimits);
      if (checked instanceof Response) {
        release();
        return checked;
      }
      body = checked.bytes;
      model = checked.model;
      choices = checked.choices;
      most = checked.most;
    }
    const provider = picked.provider;
    const asked = { kind, path: url.pathname, search: url.search, model: model ?? "" };
    const sent = provider === undefined ? null : providerSend(provider, asked);
    if (sent?.kind === "refused" || (provider === undefined && noKey)) {
      release();
      const named = at.target === undefined ? service : "factory";
      const refusal = sent?.kind === "refused"
        ? { error: sent.error, message: sent.message }
        : { error: "no_key" as const, message: noKeyMessage(named) };
      return errorAnswer(service, refusal);
    }
    // A model the owner prices at 0 costs nothing, so no budget holds it.
    const free = provider?.reported !== true &&
      ownerFree([model ?? "", picked.model ?? ""], this.#options.prices);
    if (metered(kind) && this.#options.admit !== undefined && !free) {
      const refusal = await this.#admitted({ service, model, path: url.pathname }, request);
      if (refusal !== null) {
        release();
        return refusal;
      }
    }
    // Audit before action: a request whose cost the log could not take is not sent.
    if (this.#options.auditable?.() === false) {
      release();
      return errorAnswer(service, {
        error: "audit_unavailable",
        message: auditDownMessage("sent"),
      });
    }
    const usageOf: UsageOf = {
      service,
      provider: provider?.name,
      kind,
      model,
      path: url.pathname,
      started,
    };
    Object.assign(usageOf, { sentModel: picked.model, reported: provider?.reported });
    // Audit before action: the most it may cost is written down before it leaves.
    const limits = { bodyBytes: body?.length ?? 0, most: (most ?? DEFAULT_MOST_OUTPUT) * choices };
    const hold = await this.#charges.hold(usageOf, limits);
    if (hold instanceof Response) {
      release();
      return hold;
    }
    const base = provider?.baseUrl ?? target.baseUrl;
    let upstream: Response;
    try {
      const to = sent?.kind === "ok"
        ? sent.url
        : `${base.replace(/\/+$/, "")}${url.pathname}${url.search}`;
      upstream = await fetch(to, {
        method: request.method,
        headers: serviceHeaders(
          request.headers,
          at.tunnel
            ? { service, key: key!, placeholder }
            : sent?.kind === "ok"
            ? { service, key: sent.key, keyHeader: sent.keyHeader, fixed: sent.fixed }
            : { service, key: key! },
        ),
        body,
        // A redirect is the client's to follow, through its own way out, without the key.
        redirect: "manual",
        signal: AbortSignal.any([request.signal, this.#closing.signal]),
      });
    } catch (error) {
      release();
      this.#charges.unhold(hold);
      const message = unreachableMessage(base, `cannot be reached (${describe(error)})`);
      return errorAnswer(service, { error: "unreachable", message });
    }
    // LiteLLM's own cost of the answer, for a provider whose prices are "reported".
    const header = reportedNanocents(upstream.headers.get("x-litellm-response-cost"));
    // A vault value the service echoes in a header is redacted as one in its body is.
    const redact = this.#options.redaction?.();
    const headers = answerHeaders(upstream.headers, {
      redact: redact === undefined ? undefined : (text) => redact.redact(text),
    });
    const type = upstream.headers.get("content-type") ?? "";
    // A stream of a route that has no streamed format (none does) is read whole, to be redacted.
    const streams = this.#options.redaction === undefined || STREAM_FORMATS[kind] !== undefined;
    if (type.includes("text/event-stream") && upstream.body !== null && streams) {
      const meter = metered(kind) && upstream.ok ? new StreamUsage(kind) : null;
      if (meter === null) this.#charges.unhold(hold);
      const answer = meteredStream(upstream.body, {
        meter,
        end: (whole) => {
          release();
          if (meter === null) return;
          // A stream cut before its last event (the client left) may not have said its whole
          // usage: then it is charged what it could have cost at most, not nothing.
          const cut = whole ? undefined : meter.final ? "reported" : "bound";
          const usage = cut === "bound" ? cutShort(meter.usage, limits) : meter.usage;
          const said = cut === "bound" ? null : header;
          this.#charges.trail(this.#charges.report(usageOf, usage, { hold, header: said, cut }));
        },
      });
      const redaction = this.#options.redaction;
      const format = STREAM_FORMATS[kind];
      const redacted = redaction === undefined || format === undefined
        ? answer
        : answer.pipeThrough(
          redactingAnswerStream(redaction(), {
            kind: format,
            choices,
            cut: (why) => this.#cut(why),
          }),
        );
      return new Response(redacted, { status: upstream.status, headers });
    }
    return await wholeAnswer(upstream, {
      headers,
      usageOf,
      release,
      base,
      redaction: this.#options.redaction,
      log: this.#log,
      // Not billed (an error, a route the service does not bill): its hold is settled.
      unbilled: () => this.#charges.unhold(hold),
      report: (usage) => this.#charges.report(usageOf, usage, { hold, header }),
    });
  }

  /**
   * What `admit` says of a request: null to send it, else the answer that refuses it. The wait ends
   * when the client leaves or the endpoint closes; the request is not sent then (thrown: no one
   * reads its answer).
   */
  async #admitted(asked: AdmitRequest, request: Request): Promise<Response | null> {
    const signal = AbortSignal.any([request.signal, this.#closing.signal]);
    const refusal = await Promise.race([this.#options.admit!(asked, signal), this.#closingNow]);
    if (signal.aborted) throw signal.reason;
    return refusal === null ? null : admitAnswer(asked.service, refusal);
  }

  /** Says a streamed answer was cut off by its redaction (an event it could not read). */
  #cut(reason: string): void {
    this.#log(`gurt model endpoint: a streamed answer was cut off: ${reason}`);
  }
}
