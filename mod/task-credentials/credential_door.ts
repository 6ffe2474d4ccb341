/**
 * The box's end of a task's HTTPS to the host of one of its credential rules
 * (docs/credentials.md): each request the TLS front hands over, read one at a time, HTTP/2 streams
 * and pipelined HTTP/1.1 alike. A request that names another host than its tunnel's is refused
 * (421). One that carries an offered placeholder in its rule's place is a candidate: a call of
 * `http.request` with `{method, host, path}`, decided, recorded, asked for where the grant says so,
 * and only then sent with the vault's value in the placeholder's place. Any other request goes as
 * it came, never with a credential. Every answer reaches the task with every vault value replaced.
 * The rules are read for every request; while they are invalid, a request carrying a placeholder
 * is refused.
 */
import {
  applyCredential,
  carriesPlaceholder,
  type CredentialLoad,
  credentialsInvalidReport,
  findCredential,
  type OfferedCredential,
  type TunnelTarget,
} from "../credentials/mod.ts";
import { requestPath } from "../policy/mod.ts";
import type { TextRedaction } from "../vault/mod.ts";
import { bodyPreview, readPrefix } from "./request_body.ts";
import { type BodyTotals, countedBody, wholeIfSmall } from "./response_body.ts";
import { answerHeaders, upstreamHeaders } from "./relay_headers.ts";

/** What deciding a candidate request came to (mod/broker's requestCall). */
export type DecidedRequest =
  | { kind: "answer"; answer: { ok: true; output: unknown } | { ok: false; error: string } }
  | { kind: "withdrawn" };

/** A refusal to record: the net_blocked record's fields and the journal event's detail. */
export interface CredentialRefusal {
  host: string;
  port: number;
  reason:
    | "request_denied"
    | "credentials_invalid"
    | "misdirected"
    | "sni_mismatch"
    | "no_sni"
    | "not_tls";
  detail: Record<string, unknown>;
}

/** What a task's credential door needs. */
export interface CredentialDoorOptions {
  /** The host and port of the tunnel. */
  target: TunnelTarget;
  /** The rules as they are now (read for every request). */
  rules(): Promise<CredentialLoad>;
  /** The task's credentials: rule ids and the placeholders it holds for them. */
  given: readonly { rule: string; placeholder: string }[];
  /** The vault's value of a key, or undefined. */
  value(secret: string): string | undefined;
  /** Decides and, if allowed, runs the call; `run` sends the request and ends with its body. */
  decide(call: {
    input: { method: string; host: string; path: string };
    preview: string;
    run(): Promise<unknown>;
    signal: AbortSignal;
  }): Promise<DecidedRequest>;
  /** The HTTP client for a rule's upstream (its CA, through the box's egress), or for none. */
  client(caFile: string | null): Deno.HttpClient;
  redaction(): TextRedaction;
  redact(text: string): string;
  refused(refusal: CredentialRefusal): Promise<void>;
  log(line: string): void;
}

/** The handler of one tunnel's requests. */
export function credentialDoor(
  options: CredentialDoorOptions,
): (request: Request) => Promise<Response> {
  return (request) => answer(options, request);
}

async function answer(options: CredentialDoorOptions, request: Request): Promise<Response> {
  const { target } = options;
  const url = new URL(request.url);
  const port = url.port === "" ? 443 : Number(url.port);
  if (url.hostname.toLowerCase() !== target.host || port !== target.port) {
    await options.refused({
      ...target,
      reason: "misdirected",
      detail: { host: target.host, port: target.port, reason: "host_mismatch", named: url.host },
    });
    return sentence(421, `this connection is to ${hostText(target)}, not to ${url.host}`);
  }
  const path = `${url.pathname}${url.search}`;
  const asRead = { method: request.method, url: path, headers: request.headers };
  const load = await options.rules();
  if (!load.ok) {
    const placeholders = options.given.map(({ placeholder }) => placeholder);
    const seen = carriesPlaceholder({ target: path, headers: request.headers }, placeholders);
    if (!seen) return await relay(options, request, path);
    options.log(credentialsInvalidReport(load.problems));
    await options.refused({
      ...target,
      reason: "credentials_invalid",
      detail: { ...requestFacts(request, target, url), reason: "credentials_invalid" },
    });
    return sentence(
      403,
      "the box's credential rules are invalid, so no request carrying a credential is sent; " +
        "`gurt grants check` shows the owner why",
    );
  }
  const offered: OfferedCredential[] = [];
  for (const { rule, placeholder } of options.given) {
    const found = load.rules.get(rule);
    if (found !== undefined) offered.push({ rule: found, placeholder });
  }
  const finding = findCredential(asRead, { target, offered });
  if (finding.credential === null || finding.stray) {
    // The host's own CA (a self-hosted server's) is trusted for its ordinary requests too.
    const ofHost = offered.find(({ rule }) =>
      rule.host === target.host && rule.port === target.port
    );
    return await relay(options, request, path, ofHost?.rule.caFile ?? null);
  }
  return await credentialed(options, { request, url, offered, credential: finding.credential });
}

/** A candidate request: decided as a call, and sent with the credential only if allowed. */
async function credentialed(
  options: CredentialDoorOptions,
  candidate: {
    request: Request;
    url: URL;
    offered: OfferedCredential[];
    credential: OfferedCredential;
  },
): Promise<Response> {
  const { target } = options;
  const { request, url, offered, credential } = candidate;
  const prefix = await readPrefix(request.body);
  // The path as the grants read it (unreserved escapes decoded) is the one decided and sent; one
  // they refuse goes to the decision as it is, to be refused there, on the record.
  const normal = requestPath(url.pathname);
  const pathname = "path" in normal ? normal.path : url.pathname;
  const input = { method: request.method, host: hostText(target), path: pathname };
  let ran = false;
  let started!: (response: Response) => void;
  const upstreamReady = new Promise<Response>((resolve) => (started = resolve));
  let totals!: (ended: Promise<BodyTotals>) => void;
  const bodyEnded = new Promise<Promise<BodyTotals>>((resolve) => (totals = resolve));
  const run = async () => {
    ran = true;
    const value = options.value(credential.rule.secret);
    if (value === undefined) {
      throw new Error(
        `the vault holds no ${credential.rule.secret} for the credential rule ${credential.rule.id}`,
      );
    }
    const path = `${pathname}${url.search}`;
    const applied = applyCredential(
      { method: request.method, url: path, headers: request.headers },
      { target, offered, credential, value },
    );
    const upstream = await send(options, {
      request,
      path: applied.url,
      headers: applied.headers,
      body: prefix.body,
      caFile: credential.rule.caFile ?? null,
    }).catch((error) => {
      throw new Error(`${hostText(target)} could not be reached: ${describe(error)}`);
    });
    started(upstream);
    const ended = await (await bodyEnded);
    return {
      status: upstream.status,
      bytes: ended.bytes,
      sha256: ended.sha256,
      ended: ended.ended,
    };
  };
  const decided = options.decide({
    input,
    preview: options.redact(bodyPreview(prefix)),
    run,
    signal: request.signal,
  });
  const first = await Promise.race([
    upstreamReady.then((upstream) => ({ upstream })),
    decided.then((end) => ({ end })),
  ]);
  if ("end" in first) {
    const end = first.end;
    if (end.kind === "withdrawn") return sentence(499, "the request was withdrawn");
    if (end.answer.ok) return sentence(502, "the request ended without an answer");
    if (ran) {
      return sentence(502, `the request could not be sent: ${options.redact(end.answer.error)}`);
    }
    await options.refused({
      ...target,
      reason: "request_denied",
      detail: {
        ...requestFacts(request, target, url),
        rule: credential.rule.id,
        reason: "request_denied",
      },
    });
    return sentence(403, options.redact(end.answer.error));
  }
  const upstream = first.upstream;
  const counted = countedBody(upstream.body, {
    redaction: options.redaction(),
    settled: () => decided,
  });
  totals(counted.ended);
  return new Response(await wholeIfSmall(counted.body), {
    status: upstream.status,
    statusText: upstream.statusText,
    headers: answerHeaders(upstream.headers, (text) => options.redact(text)),
  });
}

/** An ordinary request on the tunnel: sent as it came, its answer redacted, nothing decided. */
async function relay(
  options: CredentialDoorOptions,
  request: Request,
  path: string,
  caFile: string | null = null,
): Promise<Response> {
  const prefix = await readPrefix(request.body);
  let upstream: Response;
  try {
    upstream = await send(options, {
      request,
      path,
      headers: request.headers,
      body: prefix.body,
      caFile,
    });
  } catch (error) {
    return sentence(
      502,
      `${hostText(options.target)} could not be reached: ${options.redact(describe(error))}`,
    );
  }
  const counted = countedBody(upstream.body, {
    redaction: options.redaction(),
    settled: () => Promise.resolve(),
  });
  return new Response(await wholeIfSmall(counted.body), {
    status: upstream.status,
    statusText: upstream.statusText,
    headers: answerHeaders(upstream.headers, (text) => options.redact(text)),
  });
}

/** Sends a request to the tunnel's host through the box's egress; redirects are the task's. */
async function send(
  options: CredentialDoorOptions,
  sent: {
    request: Request;
    path: string;
    headers: Headers;
    body: ReadableStream<Uint8Array> | Uint8Array | null;
    caFile: string | null;
  },
): Promise<Response> {
  const { target } = options;
  const origin = target.port === 443
    ? `https://${target.host}`
    : `https://${target.host}:${target.port}`;
  return await fetch(`${origin}${sent.path}`, {
    method: sent.request.method,
    headers: upstreamHeaders(sent.headers),
    body: sent.body,
    redirect: "manual",
    signal: sent.request.signal,
    client: options.client(sent.caFile),
    ...(sent.body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

/** The request's method, host and path, for a refusal's journal event. */
function requestFacts(request: Request, target: TunnelTarget, url: URL): Record<string, unknown> {
  return { method: request.method, host: target.host, port: target.port, path: url.pathname };
}

/** `host`, with `:PORT` where the port is not 443 (as http.request's arguments name it). */
function hostText(target: TunnelTarget): string {
  return target.port === 443 ? target.host : `${target.host}:${target.port}`;
}

/** A short plain-text answer of the box's. */
function sentence(status: number, text: string): Response {
  return new Response(`gurt: ${text}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

/** An error's message, with its cause's (fetch says only "fetch failed" on its own). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}
