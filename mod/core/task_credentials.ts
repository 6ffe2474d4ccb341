/**
 * The owner's credentials on a task's own HTTPS (docs/credentials.md), as the core wires them:
 * the rules a task is given at its start (each with a fresh placeholder, in task.json), and for
 * each start of its worker its credential room: a CA of its own whose name constraints are
 * exactly its rules' hosts (its leaves served only by its own listeners in the TLS front), the
 * bundle it trusts (the box CA, its CA, the system roots), the environment that hands its programs
 * the placeholders, and the tunnels to its rules' hosts, answered by mod/task-credentials' door.
 * A credentialed request leaves the box by the credential dialer: one egress proxy of the core's,
 * on a socket in run/owner-broker, that reaches only the rules' hosts under gurt.toml's [egress].
 */
import { type BrokerDeps, requestCall, type TaskHandle } from "../broker/mod.ts";
import { HttpError } from "../common/mod.ts";
import {
  credentialEnvironment,
  credentialsInvalidReport,
  loadCredentialRules,
  newPlaceholder,
  type OfferedCredential,
} from "../credentials/mod.ts";
import { type BoxCa, makeTaskCa, type TaskCa } from "../box-ca/mod.ts";
import {
  type EgressServer,
  helloFirst,
  openLoopbackRelay,
  serveEgress,
  type TlsFront,
  type TunnelTaker,
} from "../egress/mod.ts";
import { HTTP_REQUEST_TOOL } from "../policy/mod.ts";
import { credentialDoor, type CredentialRefusal } from "../task-credentials/mod.ts";
import { canonicalHost, type Config } from "../config/mod.ts";

/** How long a credential tunnel's client may take to send its ClientHello. */
const HELLO_TIMEOUT_MS = 10_000;

/** A rule given to a task, as task.json keeps it. */
export type GivenCredential = { rule: string; placeholder: string };

/**
 * The rules of `ids`, each with a new placeholder; a clear 400 when the rules are invalid, an id
 * names no rule, or two rules would set one environment variable.
 */
export async function giveCredentials(
  home: string,
  ids: readonly string[],
): Promise<GivenCredential[]> {
  if (ids.length === 0) return [];
  const load = await loadCredentialRules(`${home}/credentials`);
  if (!load.ok) throw new HttpError(400, credentialsInvalidReport(load.problems));
  const offered: OfferedCredential[] = [];
  for (const id of new Set(ids)) {
    const rule = load.rules.get(id);
    if (rule === undefined) {
      const known = [...load.rules.keys()].join(", ") || "none";
      throw new HttpError(
        400,
        `there is no credential rule ${id} (${home}/credentials/${id}.toml); the rules are: ${known}; see docs/credentials.md`,
      );
    }
    offered.push({ rule, placeholder: newPlaceholder(id) });
  }
  try {
    credentialEnvironment(offered);
  } catch (error) {
    throw new HttpError(400, error instanceof Error ? error.message : String(error));
  }
  return offered.map(({ rule, placeholder }) => ({ rule: rule.id, placeholder }));
}

/** A task's credentials for one start of its worker. */
export interface CredentialRoom {
  /** The bundle file the task trusts, or null (no front: nothing is intercepted). */
  caBundle: string | null;
  /** The environment variables that hand the placeholders to its programs. */
  env: Record<string, string>;
  /** The taker of a tunnel to one of its rules' hosts, else null. */
  intercept(
    host: string,
    port: number,
    refused: (refusal: CredentialRefusal) => Promise<void>,
  ): TunnelTaker | null;
}

/** The core's credential dialer: HTTP clients whose connections go out by its egress proxy. */
export class CredentialDialer {
  readonly #hosts = new Set<string>();
  readonly #clients = new Map<string, Deno.HttpClient>();
  #egress: EgressServer | null = null;
  #relay: { port: number; close(): Promise<void> } | null = null;
  #opening: Promise<void> | null = null;

  constructor(readonly options: { socketPath: string; config: Config; log(line: string): void }) {}

  /** Lets `host:port` be reached (a live task's rule). */
  allow(host: string, port: number): void {
    this.#hosts.add(port === 443 ? host : `${host}:${port}`);
  }

  /** Opens the proxy and its loopback relay on first use. */
  async ready(): Promise<void> {
    this.#opening ??= this.#open();
    await this.#opening;
  }

  async #open(): Promise<void> {
    const egress = this.options.config.egress;
    this.#egress = await serveEgress({
      socketPath: this.options.socketPath,
      policy: () => ({
        hosts: [...this.#hosts],
        allowPrivate: egress.allow_private_hosts,
        resolve: egress.resolve,
        unknown: "deny",
      }),
      ownAddresses: () => Deno.networkInterfaces().map((face) => face.address),
      onBlocked: (event) => {
        this.options.log(
          `gurt: the credential dialer refused ${event.host}:${event.port} (${event.reason})`,
        );
        return Promise.resolve();
      },
    });
    this.#relay = await openLoopbackRelay(this.options.socketPath);
  }

  /** The client for a rule's CA file (PEM, beside the system roots), or for none. */
  client(caFile: string | null): Deno.HttpClient {
    if (this.#relay === null) throw new Error("the credential dialer is not open");
    const key = caFile ?? "";
    let client = this.#clients.get(key);
    if (client === undefined) {
      client = Deno.createHttpClient({
        proxy: { url: `http://127.0.0.1:${this.#relay.port}` },
        caCerts: caFile === null ? [] : [Deno.readTextFileSync(caFile)],
      });
      this.#clients.set(key, client);
    }
    return client;
  }

  async close(): Promise<void> {
    for (const client of this.#clients.values()) client.close();
    this.#clients.clear();
    await this.#relay?.close().catch(() => {});
    await this.#egress?.close().catch(() => {});
  }
}

/** What opening a task's credential room needs. */
export interface CredentialRoomOptions {
  deps: BrokerDeps;
  /** The task's folder, where its bundle is written. */
  dir: string;
  front?: TlsFront;
  ca?: BoxCa;
  dialer: CredentialDialer;
}

/**
 * Opens the credential room of `task` for a start of its worker; null when it was given none. The
 * rules are read again: one removed or invalid now fails the start, saying which.
 */
export async function openCredentialRoom(
  task: TaskHandle,
  options: CredentialRoomOptions,
): Promise<CredentialRoom | null> {
  const given = task.record.credentials ?? [];
  if (given.length === 0) return null;
  const { deps, front, ca, dialer } = options;
  const home = deps.home;
  const load = await loadCredentialRules(`${home}/credentials`);
  if (!load.ok) throw new Error(credentialsInvalidReport(load.problems));
  const offered: OfferedCredential[] = given.map(({ rule, placeholder }) => {
    const found = load.rules.get(rule);
    if (found === undefined) {
      throw new Error(`the credential rule ${rule} the task was given is gone from credentials/`);
    }
    return { rule: found, placeholder };
  });
  const env = credentialEnvironment(offered);
  if (front === undefined || ca === undefined) {
    return {
      caBundle: null,
      env,
      intercept: () => null,
    };
  }
  const targets = new Set(offered.map(({ rule }) => `${rule.host}:${rule.port}`));
  const taskCa: TaskCa = await makeTaskCa([...new Set(offered.map(({ rule }) => rule.host))]);
  const caBundle = `${options.dir}/ca-bundle.pem`;
  await Deno.writeTextFile(caBundle, ca.bundleWith(taskCa.caPem), { mode: 0o644 });
  await Deno.chmod(caBundle, 0o644);
  for (const { rule } of offered) dialer.allow(rule.host, rule.port);
  await dialer.ready();
  const intercept = (
    host: string,
    port: number,
    refused: (refusal: CredentialRefusal) => Promise<void>,
  ): TunnelTaker | null => {
    if (!targets.has(`${host}:${port}`)) return null;
    const handle = credentialDoor({
      target: { host, port },
      rules: () => loadCredentialRules(`${home}/credentials`),
      given,
      value: (secret) => deps.vault.value(secret),
      decide: (call) =>
        requestCall({ deps, task }, {
          tool: HTTP_REQUEST_TOOL,
          input: call.input,
          preview: call.preview,
          run: call.run,
          signal: call.signal,
        }),
      client: (caFile) => dialer.client(caFile),
      redaction: () => deps.redaction(),
      redact: (text) => deps.redact(text),
      refused,
      log: deps.log,
    });
    const named = canonicalHost(host);
    if ("problem" in named) return null;
    // Only TLS naming this host alone is answered: the door's Host check then holds its requests.
    return helloFirst(
      named,
      (client, first) =>
        front.take(client, {
          host,
          first,
          handle,
          room: { id: task.id, leaf: (name) => taskCa.leaf(name) },
        }),
      {
        timeoutMs: HELLO_TIMEOUT_MS,
        refused: (reason) => refused({ host, port, reason, detail: { host, port, reason } }),
      },
    );
  };
  return { caBundle, env, intercept };
}
