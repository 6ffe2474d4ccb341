/**
 * A task's two network doors, as the core opens them for each start of its worker: its egress
 * proxy and its model endpoint, on their sockets in the task's folder, its user's (0600). Each
 * refusal of either is a net_blocked audit record and a net.blocked event in the task's journal;
 * a tunnel to a model host on 443 is answered by the box's TLS front and handed to this task's own
 * model endpoint, and one to a host of the task's credential rules to its credential door.
 */
import {
  admitModelRequest,
  type BrokerDeps,
  carriedNanocents,
  charge,
  drawTaskBytes,
  holdWhat,
  markUnsettled,
  type TaskHandle,
} from "../broker/mod.ts";
import type { EgressServer, TlsFront, TunnelTaker } from "../egress/mod.ts";
import { INTERCEPTED_HOSTS, isInterceptedHost } from "../box-ca/mod.ts";
import type { ModelEndpoint } from "../model-proxy/mod.ts";
import { headCarriesPlaceholder } from "../credentials/mod.ts";
import type { CredentialRefusal } from "../task-credentials/mod.ts";
import type { TaskUser } from "./task_users.ts";
import { openTaskEgress } from "./task_egress.ts";
import { openTaskModel } from "./task_model.ts";

/** A task's open doors. */
export interface TaskDoors {
  egress: EgressServer;
  model: ModelEndpoint;
}

/** What openTaskDoors needs besides the task. */
export interface TaskDoorsOptions {
  deps: BrokerDeps;
  paths: { egress: string; model: string };
  /** The task's user, who owns the sockets; null when tasks run as the core's own user. */
  user: TaskUser | null;
  /** The box's TLS front, for the model hosts' tunnels; absent: none is answered. */
  front?: TlsFront;
  /** For [egress] unknown = "ask": the owner's answer about `host:port`. */
  ask(host: string, port: number): Promise<boolean>;
  /** The taker of a tunnel to one of the task's credential hosts (task_credentials.ts), else null. */
  credentials?(
    host: string,
    port: number,
    refused: (refusal: CredentialRefusal) => Promise<void>,
  ): TunnelTaker | null;
  /** The task's credential placeholders: a plain HTTP request carrying one is refused. */
  placeholders?: readonly string[];
}

/** Opens a task's egress proxy and model endpoint; if the endpoint fails, the proxy is closed. */
export async function openTaskDoors(
  task: TaskHandle,
  options: TaskDoorsOptions,
): Promise<TaskDoors> {
  const { deps, paths } = options;
  const blocked = async (
    place: { host: string; port: number; reason: string },
    detail: unknown,
  ) => {
    await deps.audit.append({ type: "net_blocked", task: task.id, ...place }).catch(
      (error) => deps.log(`gurt: task ${task.id}: net_blocked not audited: ${error.message}`),
    );
    await task.journal.append({
      type: "event",
      time: deps.clock().toISOString(),
      event: "net.blocked",
      detail,
    }).catch(() => {});
  };
  // Set once the endpoint is open; a tunnel before that is answered 503.
  let model: ModelEndpoint | null = null;
  const egress = await openTaskEgress({
    task: task.id,
    socketPath: paths.egress,
    config: deps.config,
    hosts: () => task.record.hosts,
    blocked,
    log: deps.log,
    clock: deps.clock,
    ask: options.ask,
    intercept: (host, port) =>
      intercept(options.front, { host, port }, () => model) ??
        options.credentials?.(host, port, async (refusal) => {
          const { host, port, reason, detail } = refusal;
          await blocked({ host, port, reason }, { host, port, reason, ...detail });
        }) ??
        null,
    carriesCredential: (head) => headCarriesPlaceholder(head, options.placeholders ?? []),
  });
  try {
    model = await openTaskModel({
      task: task.id,
      socketPath: paths.model,
      config: deps.config,
      secret: (name) => deps.vault.value(name),
      charge: ({ cents, model, hold }) =>
        charge({ deps, task }, {
          cents,
          what: hold === undefined ? "model" : holdWhat(hold),
          model,
          hold,
        }),
      journal: (line) => task.journal.append(line),
      unsettled: () => markUnsettled(deps.home, task.id),
      carried: () => carriedNanocents(task.journal.state),
      clock: deps.clock,
      blocked,
      redaction: deps.redaction,
      log: deps.log,
      drawBytes: (count) =>
        drawTaskBytes(task, { count, total: deps.config.broker.max_task_bytes }),
      admit: (facts, signal) => admitModelRequest({ deps, task }, { facts, signal }),
      steps: () => task.journal.state.steps,
      auditable: () => deps.audit.failed !== true,
    });
    for (const path of [paths.egress, paths.model]) {
      await Deno.chmod(path, 0o600);
      if (options.user !== null) await Deno.chown(path, options.user.uid, options.user.gid);
    }
  } catch (error) {
    await egress.close().catch(() => {});
    await model?.close().catch(() => {});
    throw error;
  }
  return { egress, model };
}

/**
 * A tunnel of the task's to a model service's host on 443, answered by the box: its TLS by the
 * front with the box CA's leaf, each request inside by the task's own model endpoint, which puts
 * the vault's key in place of the task's placeholder. Null for any other tunnel.
 */
function intercept(
  front: TlsFront | undefined,
  target: { host: string; port: number },
  endpoint: () => ModelEndpoint | null,
): TunnelTaker | null {
  if (front === undefined || target.port !== 443 || !isInterceptedHost(target.host)) return null;
  const service = INTERCEPTED_HOSTS[target.host];
  return (client, first) =>
    front.take(client, {
      host: target.host,
      first,
      handle: (request) => {
        const model = endpoint();
        if (model === null) return Promise.resolve(new Response(null, { status: 503 }));
        if (service === "factory") return model.factoryRequest(request);
        return model.tunnelRequest(request, service);
      },
    });
}
