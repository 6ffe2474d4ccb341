/**
 * The core (`gurt serve`): takes the audit lock and checks the log, lays out the home, opens the
 * admin socket, reopens the tasks that were live, and answers until it is closed.
 */
import { AuditLogIndex, AuditWriter } from "../audit/mod.ts";
import { adminSocketPath, codeDir, type Config, missingProviderKeys } from "../config/mod.ts";
import {
  type ApprovalContext,
  ApprovalTable,
  type BrokerDeps,
  chargeHeldCharges,
  closeAtRestart,
  expireDue,
  type HeldCharge,
  recoverTaskJournals,
  restoreApprovals,
  type RestoreCounts,
  settleHeldCharges,
  type VaultView,
  type Verdict,
} from "../broker/mod.ts";
import { GrantsInvalidReporter } from "../policy/mod.ts";
import { type Runtime, type RuntimeOptions, SandboxRuntime } from "../runtime/mod.ts";
import { standardRegistry, type ToolRegistry } from "../tools/mod.ts";
import { answerRedaction, redactingAppender, Vault } from "../vault/mod.ts";
import { adminRoutes } from "./admin_routes.ts";
import { ensureHomeLayout, serveSocket } from "./home_layout.ts";
import { TaskManager } from "./task_manager.ts";
import { keptAtStart, OpenApprovals, restoredNotice } from "./open_approvals.ts";
import { homesNotice, TaskSandboxes } from "../sandbox/mod.ts";
import { openBoxCa } from "../box-ca/mod.ts";
import { openTlsFront } from "../egress/mod.ts";
import { shownText } from "../owner-text/mod.ts";
import { isDiskFull } from "../common/mod.ts";
import { boxNotices } from "./task_log.ts";
import type { GuardedServer } from "../net/mod.ts";
import { AppCatalog, type InstalledApp, loadApps } from "../apps/mod.ts";
import { appConnector } from "./app_launch.ts";
import { AppManager } from "./app_manager.ts";
import { createHash } from "node:crypto";
import { GrantsWatch } from "./grants_watch.ts";

/** The most characters of one line of the core's log (a task's own lines are cut shorter first). */
const LOG_LINE_MAX = 8000;

/** One line of the core's log as printed: shown as data, so nothing it quotes can forge a line. */
export function logLine(line: string): string {
  return shownText(line, { max: LOG_LINE_MAX });
}

/** How many connections the admin socket may have open at once: the owner's commands and pages. */
const ADMIN_CONNECTIONS = 1024;

/** How a core is started; tests replace the runtime, the tools or the audit writer's hooks. */
export interface CoreOptions {
  acceptBreak?: boolean;
  log?: (line: string) => void;
  clock?: () => Date;
  runtime?: Runtime;
  /** For the sandbox runtime started when `runtime` is not given (tests give the fetcher a CA). */
  runtimeOptions?: RuntimeOptions;
  registry?: ToolRegistry;
  asRoot?: boolean;
  /** The sync of a task's home before its step (BrokerDeps.syncHome); the bench passes a no-op. */
  syncHome?: (home: string) => Promise<void>;
  /** The vault view the core's own paths read (the model endpoint's keys); tests pass one. */
  vault?: VaultView;
  /**
   * Opens the audit writer with these options (AuditWriter.open's); tests pass one that fails on
   * demand.
   */
  openAudit?: (
    home: string,
    options: { acceptBreak: boolean; beforeWrite: (lostFrom: number) => Promise<void> },
  ) => Promise<{ writer: AuditWriter; notices: string[] }>;
}

/** A running core. */
export class Core {
  #expiry: ReturnType<typeof setInterval> | undefined;

  private constructor(
    readonly deps: BrokerDeps,
    readonly tasks: TaskManager,
    readonly admin: GuardedServer,
    readonly writer: AuditWriter,
    readonly notices: string[],
    readonly vault: Vault,
    /** The live index of the audit log that the owner's Audit and task pages read. */
    readonly auditIndex: AuditLogIndex,
    /** The installed apps, whose servers stop when the core does. */
    readonly apps: AppCatalog,
    private readonly closing: AbortController,
    /** The open approvals on disk, for the next start to open again. */
    private readonly open: OpenApprovals,
  ) {}

  /**
   * Starts a core on `config.home`. Throws, having changed nothing, if the log or home is unusable,
   * and before anything starts if the vault is unsafe (see runbook.md#vault-permissions).
   */
  static async start(config: Config, options: CoreOptions = {}): Promise<Core> {
    try {
      return await Core.#start(config, options);
    } catch (error) {
      // The OS says only "No space left on device": say whose disk, and what to do.
      if (!isDiskFull(error)) throw error;
      throw new Error(
        `gurt serve cannot start: the disk of the box home ${config.home} is full (${
          (error as Error).message
        }); free space on it; see runbook.md#disk-full`,
      );
    }
  }

  static async #start(config: Config, options: CoreOptions): Promise<Core> {
    const asRoot = options.asRoot ?? Deno.uid() === 0;
    // Only what the audit lock needs, before it is taken: a second core that finds it taken must
    // have made or changed nothing of the running core's.
    const laidOut = await ensureHomeLayout(config.home, { taskUsers: asRoot, part: "audit" });
    const vault = await Vault.open({
      path: config.vault,
      home: config.home,
      owner: { uid: Deno.uid() ?? 0 },
      clock: options.clock,
    });
    const redact = (text: string) => vault.redact(text);
    const print = options.log ?? ((line: string) => console.error(line));
    // One line per call, whatever it quotes: what a task sent (a path, a host, an error's text) is
    // shown as data (every control, invisible and direction character escaped), so it cannot end
    // the line or forge another. The task's lines are cut to their own length before they get here.
    const log = (line: string) => print(logLine(redact(line)));
    // A provider's key the vault lacks is said, not refused: `gurt vault set` needs this core.
    const keys = options.vault ?? vault.view();
    for (const missing of missingProviderKeys(config, (name) => keys.value(name) !== undefined)) {
      log(`gurt: ${missing.message}`);
    }
    const open = options.openAudit ?? AuditWriter.open;
    const voided: string[] = [];
    let held: HeldCharge[] = [];
    const { writer, notices } = await open(config.home, {
      acceptBreak: options.acceptBreak ?? false,
      // A result line on disk whose Result record is not: voided before the log goes on. A model
      // charge held and not settled: its journal line if the log has its record, else held.
      beforeWrite: async (lostFrom) => {
        voided.push(...await recoverTaskJournals(config.home, { lostFrom, clock: options.clock }));
        const settled = await settleHeldCharges(config.home, { clock: options.clock });
        voided.push(...settled.notices);
        held = settled.held;
      },
    });
    notices.push(...voided);
    // Charged now, flagged recovered: never lost (docs/audit.md#held-model-charges).
    notices.push(
      ...await chargeHeldCharges(config.home, {
        held,
        audit: redactingAppender(writer, redact),
        clock: options.clock,
      }).catch((error) => {
        writer.close();
        throw error;
      }),
    );
    try {
      laidOut.push(...await ensureHomeLayout(config.home, { taskUsers: asRoot, part: "rest" }));
      notices.unshift(...laidOut);
      let runtime = options.runtime;
      if (runtime === undefined) {
        const started = await SandboxRuntime.start(config.runtime, {
          log,
          protectedPaths: [config.home, config.vault],
          stateDir: `${config.home}/run`,
          ...options.runtimeOptions,
        });
        runtime = started.runtime;
        notices.push(...started.notices);
      }
      const kept = await keptAtStart(config.home);
      if (kept.notice !== null) notices.push(kept.notice);
      const approvals = new ApprovalTable<ApprovalContext, Verdict>();
      const open = new OpenApprovals(config.home, log);
      const noteOpen = () =>
        open.note(
          approvals.entries().map((entry) => ({
            shown: entry.shown,
            kept: entry.context.kept,
          })),
        );
      approvals.onChange(noteOpen);
      approvals.stored = () => open.flushed();
      const closing = new AbortController();
      const keyProblem = (app: string, declared: readonly string[], name: string) => {
        try {
          vault.readSecret(app, declared, name);
          return null;
        } catch (error) {
          return (error as Error).message;
        }
      };
      let connect: ((app: InstalledApp) => ReturnType<ReturnType<typeof appConnector>>) | null =
        null;
      const apps = new AppCatalog({
        connect: (app) => connect!(app),
        keyProblem,
        keysNow: (app) => keysNow(vault, app, keyProblem),
        log,
        idleMs: config.apps.idle_ms,
        callTimeoutMs: config.apps.call_timeout_ms,
        maxResultBytes: config.runtime.max_output_bytes,
      });
      const deps: BrokerDeps = {
        home: config.home,
        config,
        audit: redactingAppender(writer, redact),
        registry: options.registry ?? standardRegistry(apps),
        approvals,
        runtime,
        readSecret: vault.readSecret,
        vault: options.vault ?? vault.view(),
        redact,
        redaction: () => answerRedaction(vault.redactor()),
        clock: options.clock ?? (() => new Date()),
        log,
        boxLog: boxNotices(log),
        grantsReporter: new GrantsInvalidReporter(),
        shutdown: closing.signal,
        syncHome: options.syncHome,
      };
      const limits = config.tasks;
      const sandbox = await TaskSandboxes.prepare(`${config.home}/run`, {
        limits: {
          memoryBytes: limits.memory_bytes,
          maxProcesses: limits.max_processes,
          cpus: limits.cpus,
        },
        tmpBytes: limits.tmp_bytes,
        // node_modules by its real place: a link may lead out of the code folder.
        program: [codeDir(), `${codeDir()}/node_modules`, Deno.execPath()],
      });
      notices.push(...sandbox.notices, homesNotice(asRoot, limits.home_bytes));
      const appLimits = config.apps;
      const appSandbox = await TaskSandboxes.prepare(`${config.home}/run`, {
        limits: {
          memoryBytes: appLimits.memory_bytes,
          maxProcesses: appLimits.max_processes,
          cpus: appLimits.cpus,
        },
        tmpBytes: appLimits.tmp_bytes,
        program: [codeDir(), `${codeDir()}/node_modules`, Deno.execPath()],
      });
      connect = appConnector({
        deps,
        sandboxes: appSandbox.sandboxes,
        asRoot,
        readSecret: vault.readSecret,
      });
      notices.push(...await loadApps(config.home, apps));
      // Said now, and when a file changes, not first at a task's call.
      const grantsWatch = await GrantsWatch.start({
        home: config.home,
        appTools: () => deps.registry.appToolNames(),
        reporter: deps.grantsReporter,
        log,
      });
      closing.signal.addEventListener("abort", () => void grantsWatch.close());
      const appManager = new AppManager({
        deps,
        catalog: apps,
        asRoot,
        vaultHas: (name) => vault.has(name),
        keyProblem,
      });
      // The box CA, made on the first start: tasks trust it for the model hosts the egress proxy
      // answers itself (the TLS front), so an agent that ignores its base URL still never holds a key.
      const ca = await openBoxCa(`${config.home}/ca`);
      const front = openTlsFront({ leaf: (host) => ca.leaf(host), log });
      const reopened: RestoreCounts = { restored: 0, expired: 0, closed: 0 };
      const reopenedByTask = new Map<string, { count: number; first: number }>();
      const tasks = new TaskManager(deps, {
        asRoot,
        sandboxes: sandbox.sandboxes,
        interception: { front, caBundle: ca.bundlePath, ca },
        reopenApprovals: async (ctx) => {
          const list = kept.byTask.get(ctx.task.id);
          if (list === undefined) return;
          kept.byTask.delete(ctx.task.id);
          const counts = await restoreApprovals(ctx, list);
          reopened.restored += counts.restored;
          reopened.expired += counts.expired;
          reopened.closed += counts.closed;
          reopenedByTask.set(ctx.task.id, {
            count: counts.restored,
            first: list[0].shown.approval,
          });
        },
      });
      const socket = adminSocketPath(config.home);
      const auditIndex = new AuditLogIndex(config.home);
      const app = adminRoutes(deps, { tasks, socket, auditIndex, vault, apps: appManager });
      const admin = await serveSocket(socket, (request) => app.fetch(request), {
        name: "the admin socket",
        // The owner's commands and the portal's pages and live streams.
        maxConnections: ADMIN_CONNECTIONS,
        headerTimeoutMs: config.broker.header_timeout_ms,
        log,
      });
      const core = new Core(
        deps,
        tasks,
        admin,
        writer,
        notices,
        vault,
        auditIndex,
        apps,
        closing,
        open,
      );
      for (const app of apps.apps()) {
        if (app.manifest.start !== "eager") continue;
        apps.start(app.name).catch((error) =>
          log(`gurt: app ${app.name} did not start: ${error.message}`)
        );
      }
      // The index reads the whole log once, now, so that no page view waits for it.
      auditIndex.refresh().catch((error) =>
        log(`gurt serve: the audit log could not be indexed for the portal: ${error.message}`)
      );
      const restored = await tasks.restore();
      if (restored.length > 0) notices.push(`gurt: reopened tasks ${restored.join(", ")}`);
      // Kept for a task that is not live now: closed, as its end would have.
      for (const list of kept.byTask.values()) {
        for (const shown of list.map((one) => one.shown)) {
          const expired = Date.parse(shown.expires) <= deps.clock().getTime();
          await closeAtRestart(deps, { shown, reason: "its task is no longer live", expired });
          if (expired) reopened.expired++;
          else reopened.closed++;
        }
      }
      kept.byTask.clear();
      noteOpen(); // the file now lists what is open, or is gone
      await open.flushed();
      const reopenedLine = restoredNotice(reopened, reopenedByTask);
      if (reopenedLine !== null) notices.push(reopenedLine);
      core.#startExpiry(Math.min(1000, Math.max(10, Math.floor(config.approvals.ttl_ms / 4))));
      return core;
    } catch (error) {
      writer.close();
      throw error;
    }
  }

  #startExpiry(everyMs: number): void {
    let running = false;
    this.#expiry = setInterval(() => {
      if (running) return;
      running = true;
      expireDue(this.deps).finally(() => (running = false));
    }, everyMs);
  }

  /** Stops answering: closes the sockets, stops the workers, releases the audit lock. */
  async close(): Promise<void> {
    clearInterval(this.#expiry);
    this.closing.abort(new Error("gurt serve is closing"));
    await this.open.stop(); // kept for the next start, which opens them again
    await this.tasks.close(); // withdraws every pending approval first
    await this.tasks.options.interception?.front.close();
    await this.apps.close();
    await this.admin.shutdown();
    await this.auditIndex.close();
    await this.deps.runtime.close?.();
    await Deno.remove(adminSocketPath(this.deps.home)).catch(() => {});
    await this.writer.close();
  }
}

/**
 * What an app's server is given of the vault now, as a digest that changes when any of its keys
 * does (a new value, removed, turned off): never a value itself.
 */
function keysNow(
  vault: Vault,
  app: InstalledApp,
  keyProblem: (app: string, declared: readonly string[], name: string) => string | null,
): string {
  const declared = [...app.manifest.secrets.keys()];
  const hash = createHash("sha256");
  for (const name of declared) {
    const problem = keyProblem(app.name, declared, name);
    hash.update(`${name}\0${problem === null ? vault.readSecret(app.name, declared, name) : ""}\0`);
  }
  return hash.digest("hex");
}
