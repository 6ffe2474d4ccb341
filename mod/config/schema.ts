/** The schema of gurt.toml: every key, its type and its default, strict. */
import { z } from "zod";
import { canonicalHost, hostEntryProblem, parseHostEntry } from "./host_entry.ts";
import { parseListenAddress } from "./listen_address.ts";
import { providersSchema } from "./providers.ts";
import { pricesSchema } from "./prices.ts";

const positiveMs = z.number().int().positive();

/** One entry of an egress host list: `a.example`, `*.npmjs.org`, `b.example:8443`, `10.0.0.5:8080`. */
export const egressHost = z.string().superRefine((value, context) => {
  const problem = hostEntryProblem(value);
  if (problem !== null) {
    context.addIssue({ code: "custom", message: `${JSON.stringify(value)} ${problem}` });
  }
});

/** A host the egress proxy may reach at a private address: an entry of the list without a port. */
const privateHost = egressHost.superRefine((value, context) => {
  const entry = parseHostEntry(value);
  if (!("problem" in entry) && /:[0-9]+$/.test(value)) {
    context.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} has a port; allow_private_hosts names hosts without ports`,
    });
  }
});

/** A name in [egress] resolve: a host name, not an address or a pattern. */
const resolveName = z.string().superRefine((value, context) => {
  const host = canonicalHost(value);
  if ("problem" in host || host.kind !== "name") {
    context.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is not a host name such as api.example.com`,
    });
  }
});

/** An address in [egress] resolve: IPv4 as four decimal numbers, or IPv6. */
const resolveAddress = z.string().superRefine((value, context) => {
  const host = canonicalHost(value);
  if ("problem" in host || host.kind !== "ip") {
    context.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is not an IP address such as 127.0.0.1 or ::1`,
    });
  }
});

/** A model service's origin, with no path: the endpoint adds the path the task asked for. */
function serviceOrigin(origin: string) {
  return z.string().regex(/^https?:\/\/[^/?#\s]+$/, {
    message:
      `must be an http or https origin with no path, such as ${origin}; for a service under a path (https://openrouter.ai/api/v1), write a [models.providers.<name>] with its base_url, api and key instead; see runbook.md#models-config`,
  }).default(origin);
}

/**
 * Keys gurt.toml no longer reads, each with what to write instead. They are refused by name, before
 * the schema, so that an old gurt.toml says what changed rather than "unknown key".
 */
export const RETIRED_KEYS: Record<string, string> = {
  "models.kind":
    "no longer read; a task's model endpoint speaks both Anthropic's and OpenAI's formats, and the service comes from the model's name: claude-* models go to Anthropic, any other to OpenAI. Delete kind and name the model in [models] model; see runbook.md#models-config",
  "models.base_url":
    "no longer read; a task's model endpoint relays Anthropic requests to [models] anthropic_base_url and OpenAI ones to openai_base_url; write those instead, each an origin with no path such as http://127.0.0.1:8080; see runbook.md#models-config",
  "models.key":
    "no longer read; the model endpoint puts the vault's ANTHROPIC_API_KEY on Anthropic requests and OPENAI_API_KEY on OpenAI ones. Delete key and store the key under that name (gurt vault set OPENAI_API_KEY); see runbook.md#models-config",
};

/** One table of gurt.toml per part; unknown keys are errors at every level. */
export const configSchema = z.strictObject({
  approvals: z.strictObject({
    /** How long an approval stays open before it expires (docs/grants.md#approvals). */
    ttl_ms: positiveMs.default(900_000),
    /** How long a waiting /call or /ask holds its request before it answers pending. */
    wait_ms: positiveMs.default(150_000),
    /** How many approvals one task may have open at once; one more is answered 429. */
    max_per_task: z.number().int().positive().default(32),
  }).prefault({}),
  broker: z.strictObject({
    /** The largest step, question or cost body, in bytes. */
    max_body_bytes: z.number().int().positive().default(64 * 1024),
    /** What one task may send in all since the core started, in bytes: model requests included. */
    max_task_bytes: z.number().int().positive().default(20 * 1024 * 1024),
    /**
     * How many model requests one task may have under way at once through its model endpoint
     * (ANTHROPIC_BASE_URL, OPENAI_BASE_URL); one more is answered 429 until one ends.
     */
    max_model_requests: z.number().int().min(1).max(64).default(4),
    /**
     * How many connections one task may have open at once to each of its doors (its broker socket,
     * its model endpoint); one more is answered 503 and closed (runbook.md#door-busy).
     */
    door_connections: z.number().int().min(1).max(65536).default(128),
    /**
     * How long a client of the broker, model and admin sockets may take to send a request's head;
     * past it the connection is answered 408 and closed (runbook.md#door-timeout).
     */
    header_timeout_ms: positiveMs.default(10_000),
  }).prefault({}),
  tasks: z.strictObject({
    /**
     * The most bytes tasks/<id>/worker.log holds: past it, its head and its newest tail are kept,
     * with a line saying how many bytes were dropped between them.
     */
    worker_log_bytes: z.number().int().min(4096).default(4 * 1024 * 1024),
    /**
     * The memory one task's sandbox may use in all: its processes and the files in its private
     * /tmp and /dev/shm (a cgroup's limit; past it the kernel kills a process of the task).
     */
    memory_bytes: z.number().int().min(64 * 1024 * 1024).default(4 * 1024 * 1024 * 1024),
    /** How many processes (threads included) one task may have at once. */
    max_processes: z.number().int().min(8).max(1_000_000).default(1024),
    /** How many of the box's CPUs one task may keep busy, such as 1.5. */
    cpus: z.number().min(0.05).max(1024).default(1),
    /**
     * The size of a task's private /tmp, and again of its /dev/shm; what is written there counts
     * toward memory_bytes too.
     */
    tmp_bytes: z.number().int().min(1024 * 1024).default(1024 * 1024 * 1024),
    /**
     * The size of a task's home (tasks/<id>/home, an ext4 image mounted there when the core runs
     * as root): past it the task's writes fail with ENOSPC, and the box home's disk keeps the rest.
     */
    home_bytes: z.number().int().min(16 * 1024 * 1024).default(8 * 1024 * 1024 * 1024),
    /**
     * Paths relative to a workdir's top that a task may not change, beside the mandatory ones
     * (mod/workdir's PROTECTED_PATHS); one ending in / is made as a folder where it is missing.
     */
    protected_paths: z.array(
      z.string().min(1).max(4096).refine(
        (path) =>
          !path.startsWith("/") &&
          !path.replace(/\/$/, "").split("/").some((part) => ["", ".", ".."].includes(part)),
        "must be a path relative to the workdir's top, with no empty, . or .. component",
      ),
    ).max(200).default([]),
  }).prefault({}),
  apps: z.strictObject({
    /** How long an app's server may go without a call before the core stops it. */
    idle_ms: positiveMs.default(10 * 60_000),
    /**
     * How long one call of an app's tool may take, its server's start included: past it the call
     * fails and the server is stopped (runbook.md#app-not-answering).
     */
    call_timeout_ms: positiveMs.default(60_000),
    /** The memory one app's sandbox may use in all (a cgroup's limit, as [tasks] memory_bytes). */
    memory_bytes: z.number().int().min(64 * 1024 * 1024).default(1024 * 1024 * 1024),
    /** How many processes (threads included) one app may have at once. */
    max_processes: z.number().int().min(8).max(1_000_000).default(256),
    /** How many of the box's CPUs one app may keep busy. */
    cpus: z.number().min(0.05).max(1024).default(1),
    /** The size of an app's private /tmp, and again of its /dev/shm. */
    tmp_bytes: z.number().int().min(1024 * 1024).default(256 * 1024 * 1024),
    /**
     * The size of an app's home (apps/<name>/home, an ext4 image mounted there while its server
     * runs, when the core runs as root): past it the app's writes fail with ENOSPC.
     */
    home_bytes: z.number().int().min(16 * 1024 * 1024).default(1024 * 1024 * 1024),
  }).prefault({}),
  portal: z.strictObject({
    /**
     * The owner API and portal's loopback address. Not set, it is 127.0.0.1:7780, or a free port
     * when that one is taken (Config's portalListenSet says which).
     */
    listen: z.string().superRefine((value, context) => {
      const parsed = parseListenAddress(value);
      if ("problem" in parsed) context.addIssue({ code: "custom", message: parsed.problem });
    }).optional(),
  }).prefault({}),
  vault: z.strictObject({
    /**
     * The vault file, an absolute path; BOX_VAULT is used over it. Not set: /etc/box/vault.env as
     * root with the default home, else the home's vault.env.
     */
    path: z.string().regex(/^\/[^\0]*[^/\0]$/, {
      message: "must be an absolute path to a file, such as /etc/box/vault.env",
    }).optional(),
    /** Where a new ANTHROPIC_API_KEY is tried (GET {base}/v1/models) before it is saved. */
    anthropic_base_url: z.string().regex(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, {
      message: "must be an http or https URL such as https://api.anthropic.com",
    }).default("https://api.anthropic.com"),
    /** How long that try may take before the key is not saved. */
    anthropic_check_timeout_ms: positiveMs.default(10_000),
  }).prefault({}),
  models: z.strictObject({
    /** The model of a loop task that names none; claude-* goes to Anthropic, any other to OpenAI. */
    model: z.string().min(1).max(200).default("claude-sonnet-5-5"),
    /** The most tokens one model answer of the loop may hold. */
    max_tokens: z.number().int().positive().default(4096),
    /** The most model requests one task's loop makes before it stops. */
    max_turns: z.number().int().positive().default(50),
    /**
     * Where a task's model endpoint (ANTHROPIC_BASE_URL inside the task) sends Anthropic Messages
     * requests, with the vault's ANTHROPIC_API_KEY: the service's origin, without /v1.
     */
    anthropic_base_url: serviceOrigin("https://api.anthropic.com"),
    /** The same for OpenAI Responses and Chat Completions (OPENAI_API_KEY). */
    openai_base_url: serviceOrigin("https://api.openai.com"),
    /** The same for Factory's model and session paths (FACTORY_API_KEY). */
    factory_base_url: serviceOrigin("https://api.factory.ai"),
    /**
     * The owner's model services beside the built-in three (providers.ts): a task's model names one
     * as `<name>/<model>`, or a model its `models` lists.
     */
    providers: providersSchema,
    /**
     * The owner's rates by model (prices.ts), dollars per million tokens, over the shipped table's.
     */
    prices: pricesSchema,
  }).prefault({}),
  runtime: z.strictObject({
    /** How long one built-in call may run before its whole sandbox is killed. */
    timeout_ms: positiveMs.default(30_000),
    /** Each sandboxed process's address space, and the size of the sandbox's private /tmp. */
    memory_bytes: z.number().int().min(16 * 1024 * 1024).default(512 * 1024 * 1024),
    /** How many processes one call may have at once (where the box can enforce it). */
    max_processes: z.number().int().min(2).default(64),
    /** The output a call may return; more is cut and the result says truncated. */
    max_output_bytes: z.number().int().positive().default(1024 * 1024),
    /** How long one http_fetch may take, redirects included. */
    fetch_timeout_ms: positiveMs.default(30_000),
    /** The response body http_fetch returns at most; more is cut and marked truncated. */
    max_fetch_bytes: z.number().int().positive().default(5 * 1024 * 1024),
    /** Redirects http_fetch follows, each checked against the grant's hosts first. */
    max_redirects: z.number().int().min(0).max(20).default(5),
    /** Hosts http_fetch may reach at loopback, private, link-local or unique-local addresses. */
    allow_private_hosts: z.array(
      z.string().regex(/^[a-z0-9.-]{1,253}$/, {
        message: "must be a lowercase host name such as printer.lan",
      }),
    ).default([]),
  }).prefault({}),
  egress: z.strictObject({
    /** Hosts every task's egress proxy allows, beside the task's own `--hosts`. */
    hosts: z.array(egressHost).default([]),
    /** Hosts the proxy may reach at loopback, private, link-local or the box's own addresses. */
    allow_private_hosts: z.array(privateHost).default([]),
    /** Names the proxy maps to addresses before DNS, as curl's --resolve does. */
    resolve: z.record(resolveName, resolveAddress).default({}),
    /** A host on no list: refused, or held while the owner is asked. */
    unknown: z.enum(["deny", "ask"]).default("deny"),
  }).prefault({}),
});

/** gurt.toml after defaults. */
export type FileConfig = z.infer<typeof configSchema>;
