/**
 * The schema of an app's app.toml: every key, its type and default, strict at every
 * level, and the types of the manifest that mod/apps/manifest_rules.ts makes of it.
 */
import { z } from "zod";
import { egressHost } from "../config/mod.ts";

/** The three kinds of app. */
export const APP_KINDS = ["mcp", "mcp-http", "module"] as const;

/** How a secret reaches an app: an env var, a file in its home, an argv element, or ctx/headers. */
export type SecretDelivery =
  | { kind: "env"; name: string }
  | { kind: "file"; name: string }
  | { kind: "arg" }
  | { kind: "none" };

/** One vault key an app may read, and the owner's switch for it. */
export interface AppSecret {
  delivery: SecretDelivery;
  enabled: boolean;
}

/** One header of an mcp-http app: a literal value, or a vault key put into `format` at `{}`. */
export type AppHeader =
  | { name: string; value: string }
  | { name: string; secret: string; format: string };

/** What the manifest says of one tool, by its box verb. */
export interface AppToolSettings {
  costCents?: number;
  description?: string;
}

/**
 * A TCP forward (`ports`): the app connects to 127.0.0.1:`port` inside its sandbox, and the core
 * relays each connection to `host`:`port` after the egress proxy's address checks.
 */
export interface AppPort {
  /** A host name or an IP address (IPv6 without brackets), canonical. */
  host: string;
  port: number;
}

/** What every kind of manifest holds. */
interface ManifestCommon {
  description?: string;
  enabled: boolean;
  start: "lazy" | "eager";
  /** The app's egress list, entries as in a task's --hosts; always [] for mcp-http. */
  hosts: string[];
  /** The app's TCP forwards; always [] for mcp-http. */
  ports: AppPort[];
  secrets: ReadonlyMap<string, AppSecret>;
  tools: ReadonlyMap<string, AppToolSettings>;
}

/** The manifest as the schema reads it, before the file's own facts (folder, hash) are added. */
export type ManifestBody =
  | ManifestCommon & {
    kind: "mcp";
    /**
     * argv; command[0] an absolute path (the real path if it was ./), or a bare program name. An
     * element `{KEY}` is the placeholder of the arg secret KEY: the runtime puts the value there.
     */
    command: string[];
    /** Plain, non-secret environment variables; `{HOME}` in a value already stands as written. */
    env: ReadonlyMap<string, string>;
  }
  | ManifestCommon & { kind: "mcp-http"; url: string; headers: AppHeader[] }
  | ManifestCommon & { kind: "module"; module: string };

/** Where a relative path in the folder leads: its real absolute path, or a sentence. */
export type ResolvePath = (
  relative: string,
  use: "command" | "module",
) => { path: string } | { problem: string };

/** A vault key's name, as mod/vault/names.ts has it (KEY_NAME, at most 128 characters). */
const KEY_NAME = /^[A-Z][A-Z0-9_]{0,127}$/;
/** A box tool's verb, the part after `<app>.`. */
const TOOL_VERB = /^[a-z][a-z0-9_]{0,63}$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
/** A file name in the app's home: no `/`, not `.` or `..`. */
const FILE_NAME = /^[A-Za-z0-9._-]{1,255}$/;
/** RFC 9110's token: what a header's name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

const bytes = new TextEncoder();

const commandElement = z.string().superRefine((value, context) => {
  if (value.includes("\0")) context.addIssue({ code: "custom", message: "holds a NUL byte" });
  else if (bytes.encode(value).length > 4096) {
    context.addIssue({ code: "custom", message: "is longer than 4096 bytes" });
  }
});

/** A header's value or format: no CR, LF, NUL or other control character but tab. */
function headerText(what: string) {
  return z.string().max(8192).refine((value) => !hasControl(value), {
    message: `holds a control character (CR, LF, NUL); a header's ${what} is one line of text`,
  });
}

/** Whether `text` holds a control character other than tab. */
function hasControl(text: string): boolean {
  for (const char of text) {
    const code = char.charCodeAt(0);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

/** `[secrets.KEY]`: a vault key the app may read. */
const rawSecret = z.strictObject({
  /** kind mcp: the environment variable that carries the value. */
  env: z.string().regex(ENV_NAME, {
    message: "must be an environment variable's name: A-Z, 0-9 and _, not starting with a digit",
  }).optional(),
  /** kind mcp: the file in the app's home that holds the value. */
  file: z.string().regex(FILE_NAME, {
    message: "must be a file name in the app's home: letters, digits, . _ -, no /",
  }).refine((name) => name !== "." && name !== "..", { message: "may not be . or .." })
    .optional(),
  /** kind mcp: the value replaces each element of command that is exactly "{KEY}". */
  arg: z.literal(true, { error: "must be true or left out" }).optional(),
  /** The owner's switch for this key in this app: off, the app is not given it. */
  enabled: z.boolean().default(true),
});

/** `[headers]` Name = "literal" or Name = { secret = "KEY", format = "Bearer {}" }. */
const rawHeader = z.union([
  headerText("value"),
  z.strictObject({
    secret: z.string(),
    format: headerText("format").refine((format) => format.split("{}").length === 2, {
      message: 'must hold "{}" exactly once, where the secret goes',
    }).default("{}"),
  }),
], { error: 'must be a string or { secret = "KEY", format = "Bearer {}" }' });

/** `[tools.verb]`: the owner's settings for the box tool `<app>.<verb>`. */
const rawTool = z.strictObject({
  /** The fixed cost of one call in US cents, reserved before it runs; absent means free. */
  cost_cents: z.number().int().min(0).max(100_000_000).optional(),
  /** Replaces the description the app's server gives. */
  description: z.string().min(1).max(2000).optional(),
});

/** A table of at most `max` keys, each checked by `key`; the first key past `max` is refused. */
function table<V extends z.ZodType>(key: z.ZodString, value: V, max: number) {
  return z.record(key, value).superRefine((record, context) => {
    const keys = Object.keys(record);
    if (keys.length > max) {
      context.addIssue({
        code: "custom",
        path: [keys[max]],
        message: `is one more than the ${max} entries this table may have`,
      });
    }
  });
}

/** app.toml as TOML holds it: every key and type, strict, before the rules between keys. */
export const rawManifest = z.strictObject({
  /** Required: a stdio MCP server, a remote MCP server, or a module in the App SDK's shape. */
  kind: z.enum(APP_KINDS, {
    error: (issue) =>
      issue.input === undefined
        ? 'is required: "mcp", "mcp-http" or "module"'
        : 'must be "mcp", "mcp-http" or "module"',
  }),
  /** What the app is for, as `gurt app list` shows it. */
  description: z.string().max(500).optional(),
  /** Off: the app's tools are not offered and it is not started. */
  enabled: z.boolean().default(true),
  /** When the core starts the app: at its first call, or when the core starts. */
  start: z.enum(["lazy", "eager"], { error: 'must be "lazy" or "eager"' }).default("lazy"),
  /** kind mcp, required: the argv the core starts, never a shell string. */
  command: z.array(commandElement).min(1, { message: "must hold the program to run" })
    .max(64, { message: "has more than 64 elements" }).optional(),
  /** kind mcp-http, required: the server's Streamable HTTP endpoint. */
  url: z.string().max(2048).optional(),
  /** kind module, required: the .ts, .js or .mjs file in the folder that exports the tools. */
  module: z.string().max(4096).optional(),
  /** kind mcp and module: the app's egress list, entries as in a task's --hosts; default none. */
  hosts: z.array(egressHost).max(256, { message: "has more than 256 entries" }).optional(),
  /**
   * kind mcp and module: TCP forwards, each `host:port` (a port of 1024 up, no wildcard); the app
   * reaches each at 127.0.0.1:port. A loopback or private address only for a host in [egress]
   * allow_private_hosts.
   */
  ports: z.array(z.string().max(300)).max(16, { message: "has more than 16 entries" }).optional(),
  /**
   * kind mcp: plain environment variables, never secrets (those go in [secrets]); `{HOME}` in a
   * value is replaced by the app's home folder.
   */
  env: table(
    z.string().regex(ENV_NAME, {
      message: "must be an environment variable's name: A-Z, 0-9 and _, not starting with a digit",
    }),
    z.string().superRefine((value, context) => {
      if (hasControl(value)) {
        context.addIssue({ code: "custom", message: "holds a control character; one line" });
      } else if (bytes.encode(value).length > 4096) {
        context.addIssue({ code: "custom", message: "is longer than 4096 bytes" });
      }
    }),
    64,
  ).optional(),
  /** kind mcp-http: the headers of every request to url. */
  headers: table(
    z.string().regex(HEADER_NAME, { message: "is not a header name (an HTTP token)" }),
    rawHeader,
    64,
  ).optional(),
  /** The vault keys the app may read: it is given these, when enabled, and no other. */
  secrets: table(
    z.string().regex(KEY_NAME, {
      message: "is not a vault key name: an upper-case letter, then A-Z, 0-9 and _",
    }),
    rawSecret,
    64,
  ).default({}),
  /** Per-tool settings, by the box tool's verb. */
  tools: table(
    z.string().regex(TOOL_VERB, {
      message: "is not a tool verb: a lower-case letter, then a-z, 0-9 and _, at most 64",
    }),
    rawTool,
    1000,
  ).default({}),
});

/** The manifest as rawManifest parses it. */
export type RawManifest = z.infer<typeof rawManifest>;
