/**
 * The rules of app.toml between keys: what each kind takes, how each secret reaches
 * the app, which placeholders, headers and URLs are allowed. Pure: where a path inside the app's
 * folder leads, it asks the `resolve` function it is given.
 */
import { z } from "zod";
import {
  type APP_KINDS,
  type AppHeader,
  type AppSecret,
  type AppToolSettings,
  type ManifestBody,
  type RawManifest,
  rawManifest,
  type ResolvePath,
  type SecretDelivery,
} from "./manifest_schema.ts";
import { envOf, KeyProblem, portsOf } from "./manifest_env_ports.ts";

/** A command element that is all a secret's placeholder, and one that holds one among other text. */
const PLACEHOLDER = /^\{([A-Z][A-Z0-9_]*)\}$/;
const INNER_PLACEHOLDER = /\{[A-Z][A-Z0-9_]*\}/;
const BARE_PROGRAM = /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/;
const MODULE_FILE = /\.(ts|js|mjs)$/;

/**
 * Variables an app's environment gets from the box or that change how its program loads, finds
 * files or trusts TLS: a secret may not take one over. Names ending in `*` are prefixes.
 */
export const REFUSED_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "PWD",
  "TMPDIR",
  "TERM",
  "TZ",
  "TZDIR",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "IFS",
  "ENV",
  "BASH_ENV",
  "BASH_FUNC_*",
  "PS4",
  "LD_*",
  "DYLD_*",
  "GCONV_PATH",
  "GLIBC_TUNABLES",
  "MALLOC_*",
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "RES_OPTIONS",
  "LOCALDOMAIN",
  "XDG_*",
  "NODE_*",
  "NPM_CONFIG_*",
  "DENO_*",
  "BUN_*",
  "PYTHON*",
  "PERL5*",
  "PERLLIB",
  "RUBY*",
  "GEM_*",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "CLASSPATH",
  "GIT_*",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "CURL_CA_BUNDLE",
  "REQUESTS_CA_BUNDLE",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "FTP_PROXY",
  "GURT_*",
] as const;

/** Headers the MCP transport or HTTP itself sets: a manifest may not set them. */
const REFUSED_HEADERS = [
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-authorization",
  "proxy-connection",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
];

const FIELD_KINDS: Record<"command" | "url" | "module" | "headers", (typeof APP_KINDS)[number]> = {
  command: "mcp",
  url: "mcp-http",
  module: "module",
  headers: "mcp-http",
};

/** A problem at a key of the manifest. */
class Refusal {
  constructor(readonly path: (string | number)[], readonly message: string) {}
}

/** The schema of app.toml; `resolve` answers where a relative path inside the folder leads. */
export function manifestSchema(resolve: ResolvePath): z.ZodType<ManifestBody> {
  return rawManifest.transform((raw, context) => {
    try {
      return checked(raw, resolve);
    } catch (error) {
      if (!(error instanceof Refusal) && !(error instanceof KeyProblem)) throw error;
      context.addIssue({ code: "custom", path: error.path, message: error.message });
      return z.NEVER;
    }
  });
}

function checked(raw: RawManifest, resolve: ResolvePath): ManifestBody {
  for (const field of ["command", "url", "module", "headers"] as const) {
    const owner = FIELD_KINDS[field];
    if (raw[field] !== undefined && raw.kind !== owner) {
      throw new Refusal([field], `is only for kind = "${owner}"`);
    }
    if (raw[field] === undefined && raw.kind === owner && field !== "headers") {
      throw new Refusal([field], `is required for kind = "${owner}"`);
    }
  }
  for (const field of ["hosts", "ports"] as const) {
    if (raw.kind === "mcp-http" && raw[field] !== undefined) {
      throw new Refusal(
        [field],
        'is not for kind = "mcp-http": the core itself connects to url, and no code of the app runs in the box',
      );
    }
  }
  if (raw.kind !== "mcp" && raw.env !== undefined) {
    throw new Refusal(["env"], 'is only for kind = "mcp"');
  }
  const common = {
    ...(raw.description === undefined ? {} : { description: raw.description }),
    enabled: raw.enabled,
    start: raw.start,
    hosts: raw.hosts ?? [],
    ports: portsOf(raw.ports),
    tools: toolsOf(raw.tools),
  };
  if (raw.kind === "mcp") {
    const command = commandOf(raw.command ?? [], resolve);
    const secrets = mcpSecrets(raw, command);
    return { kind: "mcp", ...common, command, secrets, env: envOf(raw.env, secrets, refusedEnv) };
  }
  if (raw.kind === "mcp-http") {
    const headers = headersOf(raw.headers ?? {});
    return {
      kind: "mcp-http",
      ...common,
      url: urlOf(raw.url ?? ""),
      headers,
      secrets: headerSecrets(raw, headers),
    };
  }
  const module = modulePath(raw.module ?? "", resolve);
  return { kind: "module", ...common, module, secrets: plainSecrets(raw, "module") };
}

function toolsOf(raw: RawManifest["tools"]): ReadonlyMap<string, AppToolSettings> {
  const tools = new Map<string, AppToolSettings>();
  for (const [verb, tool] of Object.entries(raw)) {
    tools.set(verb, {
      ...(tool.cost_cents === undefined ? {} : { costCents: tool.cost_cents }),
      ...(tool.description === undefined ? {} : { description: tool.description }),
    });
  }
  return tools;
}

/** The argv with command[0] checked (and resolved when it starts with ./). */
function commandOf(command: string[], resolve: ResolvePath): string[] {
  const program = command[0];
  const at = ["command", 0];
  let resolved = program;
  if (PLACEHOLDER.test(program) || INNER_PLACEHOLDER.test(program)) {
    throw new Refusal(at, "is the program to run: it may not be a secret's placeholder");
  }
  if (program.startsWith("/")) {
    if (segments(program.slice(1)).some((part) => part === ".." || part === "." || part === "")) {
      throw new Refusal(at, `${JSON.stringify(program)} is not a clean absolute path`);
    }
  } else if (program.startsWith("./")) {
    resolved = insideFolder(program.slice(2), at, resolve, "command");
  } else if (!BARE_PROGRAM.test(program)) {
    throw new Refusal(
      at,
      `${
        JSON.stringify(program)
      } must be an absolute path, a path in the app's folder starting with ./, or a program's name without /`,
    );
  }
  return [resolved, ...command.slice(1)];
}

function segments(path: string): string[] {
  return path.split("/");
}

/** A relative path checked for `..` and resolved inside the folder. */
function insideFolder(
  relative: string,
  at: (string | number)[],
  resolve: ResolvePath,
  use: "command" | "module",
): string {
  const parts = segments(relative);
  if (parts.includes("..")) {
    throw new Refusal(at, "may not hold a .. segment: it must stay inside the app's folder");
  }
  if (parts.some((part) => part === "" || part === ".")) {
    throw new Refusal(at, "must be a clean relative path (no empty or . segments, no trailing /)");
  }
  const answer = resolve(parts.join("/"), use);
  if ("problem" in answer) throw new Refusal(at, answer.problem);
  return answer.path;
}

function modulePath(module: string, resolve: ResolvePath): string {
  if (module.startsWith("/")) {
    throw new Refusal(["module"], "must be a path relative to the app's folder, such as app.ts");
  }
  if (!MODULE_FILE.test(module)) {
    throw new Refusal(["module"], "must name a .ts, .js or .mjs file");
  }
  return insideFolder(module.replace(/^\.\//, ""), ["module"], resolve, "module");
}

/** kind mcp: each secret by exactly one of env, file and arg; placeholders match arg secrets. */
function mcpSecrets(raw: RawManifest, command: string[]): ReadonlyMap<string, AppSecret> {
  const secrets = new Map<string, AppSecret>();
  const envs = new Set<string>();
  const files = new Set<string>();
  for (const [key, secret] of Object.entries(raw.secrets)) {
    const given = (["env", "file", "arg"] as const).filter((way) => secret[way] !== undefined);
    if (given.length !== 1) {
      throw new Refusal(
        ["secrets", key],
        `must set exactly one of env, file and arg = true (how the secret reaches the app), not ${
          given.length === 0 ? "none" : given.join(" and ")
        }`,
      );
    }
    let delivery: SecretDelivery = { kind: "arg" };
    if (secret.env !== undefined) {
      const refused = refusedEnv(secret.env);
      if (refused !== null) {
        throw new Refusal(
          ["secrets", key, "env"],
          `${secret.env} is a variable the box sets, or one that changes how a program loads, finds files or trusts TLS (${refused}); choose another name`,
        );
      }
      if (envs.has(secret.env)) {
        throw new Refusal(["secrets", key, "env"], `${secret.env} is given to another secret`);
      }
      envs.add(secret.env);
      delivery = { kind: "env", name: secret.env };
    } else if (secret.file !== undefined) {
      if (files.has(secret.file)) {
        throw new Refusal(["secrets", key, "file"], `${secret.file} is given to another secret`);
      }
      files.add(secret.file);
      delivery = { kind: "file", name: secret.file };
    }
    secrets.set(key, { delivery, enabled: secret.enabled });
  }
  checkPlaceholders(command, secrets);
  return secrets;
}

/** Each placeholder in command is a whole element naming an arg secret, and each has one. */
function checkPlaceholders(command: string[], secrets: ReadonlyMap<string, AppSecret>): void {
  for (let i = 1; i < command.length; i++) {
    const whole = PLACEHOLDER.exec(command[i]);
    if (whole === null) {
      if (INNER_PLACEHOLDER.test(command[i])) {
        throw new Refusal(
          ["command", i],
          "holds a secret's placeholder among other text; a placeholder must be the whole element",
        );
      }
      continue;
    }
    const secret = secrets.get(whole[1]);
    if (secret === undefined) {
      throw new Refusal(["command", i], `{${whole[1]}} is not a secret declared in [secrets]`);
    }
    if (secret.delivery.kind !== "arg") {
      throw new Refusal(["command", i], `{${whole[1]}} is a secret without arg = true`);
    }
  }
  for (const [key, secret] of secrets) {
    if (secret.delivery.kind === "arg" && !command.includes(`{${key}}`)) {
      throw new Refusal(
        ["secrets", key, "arg"],
        `command has no element "{${key}}" for the secret to replace`,
      );
    }
  }
}

/** The first entry of REFUSED_ENV that `name` is, or null. */
function refusedEnv(name: string): string | null {
  for (const entry of REFUSED_ENV) {
    if (entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : name === entry) return entry;
  }
  return null;
}

/** kind module and mcp-http: secrets take no env, file or arg. */
function plainSecrets(raw: RawManifest, kind: string): ReadonlyMap<string, AppSecret> {
  const secrets = new Map<string, AppSecret>();
  const how = kind === "module"
    ? "a module app reads its secrets with ctx.secret"
    : "an mcp-http app's secrets go into its headers";
  for (const [key, secret] of Object.entries(raw.secrets)) {
    for (const way of ["env", "file", "arg"] as const) {
      if (secret[way] !== undefined) {
        throw new Refusal(["secrets", key, way], `is only for kind = "mcp": ${how}`);
      }
    }
    secrets.set(key, { delivery: { kind: "none" }, enabled: secret.enabled });
  }
  return secrets;
}

function headersOf(raw: NonNullable<RawManifest["headers"]>): AppHeader[] {
  const headers: AppHeader[] = [];
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(raw)) {
    const lower = name.toLowerCase();
    if (REFUSED_HEADERS.includes(lower)) {
      throw new Refusal(["headers", name], "is set by HTTP or the MCP transport itself");
    }
    if (seen.has(lower)) {
      throw new Refusal(["headers", name], "is set twice (header names ignore case)");
    }
    seen.add(lower);
    headers.push(typeof value === "string" ? { name, value } : { name, ...value });
  }
  return headers;
}

function headerSecrets(raw: RawManifest, headers: AppHeader[]): ReadonlyMap<string, AppSecret> {
  const secrets = plainSecrets(raw, "mcp-http");
  const used = new Set<string>();
  for (const header of headers) {
    if (!("secret" in header)) continue;
    if (!secrets.has(header.secret)) {
      throw new Refusal(
        ["headers", header.name, "secret"],
        `${JSON.stringify(header.secret)} is not a secret declared in [secrets]`,
      );
    }
    used.add(header.secret);
  }
  for (const key of secrets.keys()) {
    if (!used.has(key)) {
      throw new Refusal(["secrets", key], "is used by no header: an mcp-http app reads no other");
    }
  }
  return secrets;
}

/** An http(s) URL with no user name, password or fragment; plain http only to loopback. */
function urlOf(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Refusal(["url"], "is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Refusal(["url"], "must be an http or https URL");
  }
  if (url.username !== "" || url.password !== "") {
    throw new Refusal(["url"], "may not hold a user name or password: put a key in [headers]");
  }
  if (text.includes("#")) throw new Refusal(["url"], "may not hold a fragment (#)");
  if (/\s/.test(text)) throw new Refusal(["url"], "may not hold spaces");
  const loopback = url.hostname === "localhost" || url.hostname === "[::1]" ||
    /^127\.[0-9.]+$/.test(url.hostname);
  if (url.protocol === "http:" && !loopback) {
    throw new Refusal(
      ["url"],
      "must be https: plain http would carry the app's headers readable on the network (http is for 127.0.0.1 and localhost only)",
    );
  }
  return url.href;
}
