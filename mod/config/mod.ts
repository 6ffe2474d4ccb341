/** gurt's configuration: the box home, the vault path and gurt.toml, with overrides. */
import { ConfigError, lineOfField, parseConfig } from "./load.ts";
import { providerKeys } from "./providers.ts";
import { type PathInputs, resolveHome, vaultChoice, type VaultSource } from "./paths.ts";
import type { FileConfig } from "./schema.ts";

export { codeDir, V8_FLAGS } from "./code_dir.ts";
export { ConfigError, parseConfig, parseStrictToml, type StrictTomlOptions } from "./load.ts";
export {
  type PathInputs,
  resolveHome,
  resolveVault,
  ROOT_HOME,
  ROOT_VAULT,
  vaultChoice,
  type VaultSource,
  vaultWhy,
} from "./paths.ts";
export { type ListenAddress, parseListenAddress } from "./listen_address.ts";
export {
  adminSocketPath,
  ownerTokenPath,
  portalAddrPath,
  portalDir,
  taskDir,
  taskSocketPath,
} from "./home_paths.ts";
export { egressHost, type FileConfig } from "./schema.ts";
export {
  BUILT_IN_PROVIDERS,
  modelMatches,
  PROVIDER_APIS,
  type ProviderApi,
  type ProviderConfig,
} from "./providers.ts";
export { type ModelPrice } from "./prices.ts";
export {
  type CanonicalHost,
  canonicalHost,
  DEFAULT_PORTS,
  entryMatches,
  type HostEntry,
  hostEntryProblem,
  type HostProblem,
  hostText,
  parseHostEntry,
} from "./host_entry.ts";

/** The portal's address when `[portal] listen` is not set (a free port when it is taken). */
export const DEFAULT_PORTAL_LISTEN = "127.0.0.1:7780";

/** Everything a role needs to know about where things are and how they behave. */
export interface Config extends Omit<FileConfig, "vault" | "portal"> {
  /** gurt.toml's `[portal]`, its address filled in. */
  portal: { listen: string };
  /**
   * Whether gurt.toml sets `[portal] listen`: a portal whose address was not chosen listens on a
   * free port when the default is taken; one whose address was chosen gives up after a few tries.
   */
  portalListenSet: boolean;
  /** The box home directory. */
  home: string;
  /** The vault file. */
  vault: string;
  /** Where its path came from: BOX_VAULT, gurt.toml's `[vault] path`, the machine's or the home's. */
  vaultFrom: VaultSource;
  /** gurt.toml's `[vault]` table (`vault` itself is the vault file's path). */
  vaultSettings: FileConfig["vault"];
  /** gurt.toml, which may not exist. */
  file: string;
  /** The settings an environment variable set over gurt.toml: `models.model` to `BOX_MODEL`. */
  fromEnv?: Record<string, string>;
}

/** The environment variables gurt's configuration reads. */
export const CONFIG_ENV = [
  "BOX_HOME",
  "BOX_VAULT",
  "BOX_APPROVAL_WAIT_MS",
  "BOX_MODEL",
  "XDG_DATA_HOME",
  "HOME",
];

/** Loads the configuration: paths from flags and environment, then gurt.toml if it exists. */
export function loadConfig(inputs: PathInputs): Config {
  const home = resolveHome(inputs);
  const file = `${home}/gurt.toml`;
  let text: string | undefined;
  try {
    text = Deno.readTextFileSync(file);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new ConfigError(file, undefined, undefined, `cannot be read: ${describe(error)}`);
    }
  }
  const { vault: vaultSettings, portal, ...parsed } = parseConfig(file, text ?? "");
  const vault = vaultChoice(home, inputs, vaultSettings.path);
  const config: Config = {
    ...parsed,
    portal: { listen: portal.listen ?? DEFAULT_PORTAL_LISTEN },
    portalListenSet: portal.listen !== undefined,
    vaultSettings,
    home,
    vault: vault.path,
    vaultFrom: vault.source,
    file,
  };
  const wait = inputs.env.BOX_APPROVAL_WAIT_MS;
  if (wait !== undefined && wait !== "") {
    if (!/^[1-9][0-9]{0,9}$/.test(wait)) {
      throw new ConfigError(
        "BOX_APPROVAL_WAIT_MS",
        undefined,
        undefined,
        `must be a whole number of milliseconds above 0, got ${JSON.stringify(wait)}`,
      );
    }
    config.approvals = { ...config.approvals, wait_ms: Number(wait) };
    config.fromEnv = { ...config.fromEnv, "approvals.wait_ms": "BOX_APPROVAL_WAIT_MS" };
  }
  const model = inputs.env.BOX_MODEL;
  if (model !== undefined && model !== "") {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}$/.test(model)) {
      throw new ConfigError(
        "BOX_MODEL",
        undefined,
        undefined,
        `must be a model's name (letters, digits and . _ : / @ -, at most 200), got ${
          JSON.stringify(model)
        }`,
      );
    }
    config.models = { ...config.models, model };
    config.fromEnv = { ...config.fromEnv, "models.model": "BOX_MODEL" };
  }
  return config;
}

/**
 * The vault keys `[models.providers]` names that the vault lacks, each a ConfigError naming
 * gurt.toml's line and field. The core says them at its start and goes on: the owner sets a key
 * with `gurt vault set`, which needs the running core, and a task's request to that provider is
 * refused until then (runbook.md#provider-key-missing).
 */
export function missingProviderKeys(config: Config, has: (name: string) => boolean): ConfigError[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(config.file);
  } catch {
    // No file, no line: the fields still say where.
  }
  return providerKeys(config.models.providers).filter(({ name }) => !has(name)).map((
    { field, name },
  ) =>
    new ConfigError(
      config.file,
      lineOfField(text, field),
      field,
      `names the vault key ${name}, which the vault does not hold: a task's request to this provider is refused until it is set (gurt vault set ${name})`,
      "see runbook.md#provider-key-missing",
    )
  );
}

/** The process's path inputs: the real environment and whether we run as root. */
export function processPathInputs(home: string | undefined): PathInputs {
  const env: Record<string, string | undefined> = {};
  for (const name of CONFIG_ENV) env[name] = Deno.env.get(name);
  return { home, env, root: Deno.uid() === 0 };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
