/**
 * One credential rule file, `credentials/<id>.toml` (docs/credentials.md#the-rule-file): TOML into
 * a CredentialRule, with every field checked and each problem named with its file, line and field,
 * as grant files are. Pure: the bytes are an argument.
 */
import { createHash } from "node:crypto";
import { parse, TomlError } from "smol-toml";
import { hostProblem, pathProblem } from "../policy/mod.ts";
import { lineOfField } from "../common/mod.ts";
import { isKeyName } from "../vault/names.ts";

/** One problem with one rule file; `line` is null where no line can be named. */
export type CredentialProblem = { file: string; line: number | null; problem: string };

/** Where the credential goes in a request: one header, HTTP Basic, or one query parameter. */
export type CredentialPlacement =
  /** `header = "Name: format"`: the header `name` set to `format` with the value in place of {}. */
  | { readonly kind: "header"; readonly name: string; readonly format: string }
  /** `basic = { user = "..." }`: `Authorization: Basic base64(user:value)`. */
  | { readonly kind: "basic"; readonly user: string }
  /** `query = "name"`: the query parameter `parameter` set to the value. */
  | { readonly kind: "query"; readonly parameter: string };

/** A credential rule as loaded: its id (the file stem), file, sha256 hex of the bytes, and fields. */
export type CredentialRule = {
  readonly id: string;
  readonly file: string;
  readonly sha256: string;
  /** The exact host name the credential may go to (lower case, two labels or more). */
  readonly host: string;
  /** The port it may go to; 443 unless the file says otherwise. */
  readonly port: number;
  /** The vault key whose value replaces the placeholder. */
  readonly secret: string;
  readonly placement: CredentialPlacement;
  /** The task's environment variables that hold the placeholder. */
  readonly env: readonly string[];
  /** Whether git is given a credential helper for https://host[:port]. */
  readonly git: boolean;
  /** A PEM file the core trusts for this host beside the system roots, or null. */
  readonly caFile: string | null;
};

/** One file's outcome. */
export type CredentialParse =
  | { ok: true; rule: CredentialRule }
  | { ok: false; problems: CredentialProblem[] };

/** The shape of a rule id, the file's stem. */
export const CREDENTIAL_ID = /^[a-z0-9-]{1,64}$/;

/** An environment variable name a rule may give the placeholder in. */
export const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;

/** An HTTP header name: a token (RFC 9110 section 5.6.2). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** What a header format may hold: visible ASCII and spaces, no control characters. */
const HEADER_FORMAT = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;
/** Headers whose value is the connection's or the message's framing, never a credential's. */
const FRAMING_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
]);
/** A Basic user name: what the git helper prints unquoted, never a `:`. */
const BASIC_USER = /^[A-Za-z0-9._@+-]{1,128}$/;
/** A query parameter name: URL-unreserved characters, so it has one spelling in a URL. */
const QUERY_NAME = /^[A-Za-z0-9._~-]{1,64}$/;

/** The environment names a rule may not set: the sandbox's, gurt's, git's, the loader's, proxies. */
function envNameProblem(name: string): string | null {
  if (!ENV_NAME.test(name)) {
    return "is not an environment variable name: use A-Z, 0-9 and _, not starting with a " +
      "digit, at most 64 characters";
  }
  if (name === "PATH" || name === "HOME") return "is set by the sandbox and may not be replaced";
  const reserved = ["BOX_", "GURT_", "GIT_CONFIG_", "LD_", "NODE_"];
  for (const prefix of reserved) {
    if (name.startsWith(prefix)) return `starts with ${prefix}, which gurt or the loader reads`;
  }
  if (name.endsWith("_PROXY")) return "ends with _PROXY, which steers a program's connections";
  if (name.includes("_CA_")) return "holds _CA_, which names the certificates a program trusts";
  return null;
}

const FIELDS = ["host", "port", "secret", "header", "basic", "query", "env", "git", "ca_file"];

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Parses one rule file: its name as it should appear in problems, and its bytes or text. */
export function parseCredentialRule(
  source: { file: string; content: Uint8Array | string },
): CredentialParse {
  const { file, content } = source;
  const bytes = typeof content === "string" ? encoder.encode(content) : content;
  const problems: CredentialProblem[] = [];
  const at = (line: number | null, problem: string): void => {
    problems.push({ file, line, problem });
  };
  const base = file.slice(file.lastIndexOf("/") + 1);
  const id = base.endsWith(".toml") ? base.slice(0, -".toml".length) : base;
  if (!CREDENTIAL_ID.test(id)) {
    at(
      null,
      `the file name ${JSON.stringify(base)} is not a credential rule id: it must be 1 to 64 ` +
        "characters of a-z, 0-9 and - followed by .toml",
    );
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    at(null, "the file is not valid UTF-8");
    return { ok: false, problems };
  }
  let raw: Record<string, unknown>;
  try {
    raw = parse(text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    at(error.line, `not valid TOML: ${error.message.split("\n")[0]}`);
    return { ok: false, problems };
  }
  const line = (...field: string[]): number | null =>
    lineOfField(text, field) ?? (field.length > 1 ? lineOfField(text, field.slice(0, 1)) : null);

  for (const key of Object.keys(raw)) {
    if (!FIELDS.includes(key)) {
      at(line(key), `${key}: unknown field; the fields are ${FIELDS.join(", ")}`);
    }
  }

  const host = raw.host;
  if (host === undefined) at(null, "host: is required");
  else if (typeof host !== "string") at(line("host"), "host: expected a string");
  else {
    const problem = hostProblem(host);
    if (problem !== null) {
      at(line("host"), `host: ${JSON.stringify(host)} is not a valid host name: it ${problem}`);
    }
  }

  let port = 443;
  if (raw.port !== undefined) {
    const value = raw.port;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 65535) {
      at(line("port"), "port: must be an integer from 1 to 65535");
    } else port = value;
  }

  const secret = raw.secret;
  if (secret === undefined) at(null, "secret: is required");
  else if (typeof secret !== "string") at(line("secret"), "secret: expected a string");
  else if (!isKeyName(secret)) {
    at(
      line("secret"),
      `secret: ${
        JSON.stringify(secret.slice(0, 128))
      } is not a vault key name: use an upper-case ` +
        "letter, then upper-case letters, digits and _ (such as GITHUB_TOKEN), at most 128 characters",
    );
  }

  const placement = placementOf(raw, line, at);

  const env: string[] = [];
  if (raw.env !== undefined) {
    if (!Array.isArray(raw.env)) at(line("env"), "env: expected an array of names");
    else {
      for (const name of raw.env) {
        if (typeof name !== "string") {
          at(line("env"), "env: expected an array of names");
          continue;
        }
        const problem = envNameProblem(name);
        if (problem !== null) at(line("env"), `env: ${JSON.stringify(name)} ${problem}`);
        else if (env.includes(name)) at(line("env"), `env: ${JSON.stringify(name)} is named twice`);
        else env.push(name);
      }
    }
  }

  let git = false;
  if (raw.git !== undefined) {
    if (typeof raw.git !== "boolean") at(line("git"), "git: expected true or false");
    else git = raw.git;
  }
  if (git && placement !== null && placement.kind !== "basic") {
    at(
      line("git"),
      "git: git sends its credential as HTTP Basic, so git = true needs basic = { user = ... }",
    );
  }

  let caFile: string | null = null;
  if (raw.ca_file !== undefined) {
    if (typeof raw.ca_file !== "string") at(line("ca_file"), "ca_file: expected a string");
    else {
      const problem = pathProblem(raw.ca_file);
      if (problem !== null) {
        at(line("ca_file"), `ca_file: ${JSON.stringify(raw.ca_file)} is not valid: it ${problem}`);
      } else caFile = raw.ca_file;
    }
  }

  if (problems.length > 0 || placement === null) return { ok: false, problems };
  return {
    ok: true,
    rule: Object.freeze({
      id,
      file,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      host: host as string,
      port,
      secret: secret as string,
      placement: Object.freeze(placement),
      env: Object.freeze(env),
      git,
      caFile,
    }),
  };
}

/** The one placement the file sets, or null with its problems told to `at`. */
function placementOf(
  raw: Record<string, unknown>,
  line: (...field: string[]) => number | null,
  at: (line: number | null, problem: string) => void,
): CredentialPlacement | null {
  const fail = (where: number | null, problem: string): null => {
    at(where, problem);
    return null;
  };
  const given = ["header", "basic", "query"].filter((key) => raw[key] !== undefined);
  if (given.length === 0) {
    at(null, "the rule must set one of header, basic and query: where the credential goes");
    return null;
  }
  if (given.length > 1) {
    at(line(given[1]), `${given.join(", ")}: set exactly one of header, basic and query`);
    return null;
  }
  if (raw.header !== undefined) {
    const value = raw.header;
    const usage = 'header: must be "Name: format" with one {} for the value, such as ' +
      '"Authorization: Bearer {}"';
    if (typeof value !== "string") return fail(line("header"), usage);
    const colon = value.indexOf(": ");
    if (colon === -1) return fail(line("header"), usage);
    const name = value.slice(0, colon);
    const format = value.slice(colon + 2);
    if (!HEADER_NAME.test(name)) {
      return fail(line("header"), `header: ${JSON.stringify(name)} is not a header name`);
    }
    if (FRAMING_HEADERS.has(name.toLowerCase())) {
      return fail(
        line("header"),
        `header: ${name} frames the request; it cannot carry a credential`,
      );
    }
    if (!HEADER_FORMAT.test(format) || format.split("{}").length !== 2) {
      return fail(line("header"), usage);
    }
    return { kind: "header", name, format };
  }
  if (raw.basic !== undefined) {
    const value = raw.basic;
    const usage = 'basic: must be a table with a user name, such as { user = "x-access-token" }';
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return fail(line("basic"), usage);
    }
    const table = value as Record<string, unknown>;
    const extra = Object.keys(table).filter((key) => key !== "user");
    if (extra.length > 0) {
      return fail(line("basic", extra[0]), `basic.${extra[0]}: unknown field; basic takes user`);
    }
    if (typeof table.user !== "string") return fail(line("basic", "user"), usage);
    if (!BASIC_USER.test(table.user)) {
      return fail(
        line("basic", "user"),
        `basic.user: ${JSON.stringify(table.user)} is not a user name gurt takes: use 1 to 128 ` +
          "of A-Z, a-z, 0-9 and . _ @ + -",
      );
    }
    return { kind: "basic", user: table.user };
  }
  const value = raw.query;
  if (typeof value !== "string" || !QUERY_NAME.test(value)) {
    return fail(
      line("query"),
      "query: must be a query parameter name of 1 to 64 of A-Z, a-z, 0-9 and . _ ~ -, " +
        'such as "access_token"',
    );
  }
  return { kind: "query", parameter: value };
}
