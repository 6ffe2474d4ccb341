/**
 * The rules of app.toml's `[env]` (plain environment variables of a stdio server) and `ports`
 * (TCP forwards), beside mod/apps/manifest_rules.ts, which calls them.
 */
import { parseHostEntry } from "../config/mod.ts";
import { EGRESS_PORT } from "../sandbox/mod.ts";
import type { AppPort, AppSecret } from "./manifest_schema.ts";

/** A problem at a key of the manifest, as manifest_rules.ts reports it. */
export class KeyProblem {
  constructor(readonly path: (string | number)[], readonly message: string) {}
}

/** The one placeholder an [env] value may hold. */
export const HOME_PLACEHOLDER = "{HOME}";

const OTHER_PLACEHOLDER = /\{[A-Z][A-Z0-9_]*\}/;

/**
 * kind mcp: `[env]` as a map. A name may not be one the box sets or one that changes how a program
 * loads, finds files or trusts TLS (`refused` says which entry it is), nor a secret's
 * env; a value holds no placeholder but {HOME}, since a secret is never put in [env].
 */
export function envOf(
  raw: Readonly<Record<string, string>> | undefined,
  secrets: ReadonlyMap<string, AppSecret>,
  refused: (name: string) => string | null,
): ReadonlyMap<string, string> {
  const secretEnvs = new Set<string>();
  for (const secret of secrets.values()) {
    if (secret.delivery.kind === "env") secretEnvs.add(secret.delivery.name);
  }
  const env = new Map<string, string>();
  for (const [name, value] of Object.entries(raw ?? {})) {
    const entry = refused(name);
    if (entry !== null) {
      throw new KeyProblem(
        ["env", name],
        `is a variable the box sets, or one that changes how a program loads, finds files or trusts TLS (${entry}); choose another name`,
      );
    }
    if (secretEnvs.has(name)) {
      throw new KeyProblem(["env", name], `is given to a secret in [secrets]`);
    }
    const other = OTHER_PLACEHOLDER.exec(value.replaceAll(HOME_PLACEHOLDER, ""));
    if (other !== null) {
      throw new KeyProblem(
        ["env", name],
        `holds ${
          other[0]
        }, which is not replaced: [env] holds plain values ({HOME} is the app's home); a vault key reaches the app through [secrets]`,
      );
    }
    env.set(name, value);
  }
  return env;
}

/**
 * kind mcp and module: `ports` as forwards. Each entry is host:port with the port written, no
 * wildcard; no two share a port (each is 127.0.0.1:port inside), none is below 1024 (which the
 * sandbox's init, not root there, cannot open) and none is the egress proxy's.
 */
export function portsOf(raw: readonly string[] | undefined): AppPort[] {
  const ports: AppPort[] = [];
  (raw ?? []).forEach((text, i) => {
    const entry = parseHostEntry(text);
    if ("problem" in entry) {
      throw new KeyProblem(["ports", i], `${JSON.stringify(text)} ${entry.problem}`);
    }
    if (!/:[0-9]+$/.test(text)) {
      throw new KeyProblem(
        ["ports", i],
        `${JSON.stringify(text)} has no port; an entry is host:port, such as 127.0.0.1:5432`,
      );
    }
    if (entry.wildcard) {
      throw new KeyProblem(["ports", i], `${JSON.stringify(text)} is a wildcard; name one host`);
    }
    const port = entry.ports[0];
    if (port < 1024) {
      throw new KeyProblem(
        ["ports", i],
        `${
          JSON.stringify(text)
        } is below 1024: the app reaches it at 127.0.0.1:${port} inside its sandbox, where no port below 1024 can be opened for it`,
      );
    }
    if (port === EGRESS_PORT) {
      throw new KeyProblem(
        ["ports", i],
        `${
          JSON.stringify(text)
        } uses ${EGRESS_PORT}, the port of the app's egress proxy inside its sandbox`,
      );
    }
    if (ports.some((other) => other.port === port)) {
      throw new KeyProblem(
        ["ports", i],
        `${
          JSON.stringify(text)
        } uses port ${port} again; the app reaches each entry at 127.0.0.1:port, so each port once`,
      );
    }
    ports.push({ host: entry.host, port });
  });
  return ports;
}
