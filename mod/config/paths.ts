/** Where the box home and the vault live, from flags and the environment. */

/** The inputs that choose the box home and the vault: flags first, then the environment. */
export interface PathInputs {
  /** `--home`, if given. */
  home?: string;
  /** The process environment (only the variables gurt reads). */
  env: Record<string, string | undefined>;
  /** Whether the process runs as root. */
  root: boolean;
}

/** The box home: `--home`, else BOX_HOME, else /var/lib/gurt as root, else $XDG_DATA_HOME/gurt. */
export function resolveHome(inputs: PathInputs): string {
  const chosen = inputs.home ?? inputs.env.BOX_HOME;
  if (chosen !== undefined && chosen !== "") return absolute(chosen, "the box home");
  if (inputs.root) return ROOT_HOME;
  const xdg = inputs.env.XDG_DATA_HOME;
  if (xdg !== undefined && xdg.startsWith("/")) return `${trimSlash(xdg)}/gurt`;
  const userHome = inputs.env.HOME;
  if (userHome === undefined || !userHome.startsWith("/")) {
    throw new Error(
      "cannot choose a box home: HOME is not an absolute path; pass --home or set BOX_HOME",
    );
  }
  return `${trimSlash(userHome)}/.local/share/gurt`;
}

/** The box home as root when neither --home nor BOX_HOME names one. */
export const ROOT_HOME = "/var/lib/gurt";

/** The machine's vault as root, for the default box home only. */
export const ROOT_VAULT = "/etc/box/vault.env";

/**
 * Where the vault's path came from: BOX_VAULT, gurt.toml's [vault] path, or by default the
 * machine's (root with the default home) or the home's own.
 */
export type VaultSource = "BOX_VAULT" | "[vault] path" | "machine" | "home";

/**
 * The vault file: BOX_VAULT, else gurt.toml's `[vault] path` (`configured`), else
 * /etc/box/vault.env as root with the default home (/var/lib/gurt), else BOX_HOME/vault.env: a
 * box home of its own (a test's, a second box's) never writes the machine's vault by default.
 */
export function resolveVault(home: string, inputs: PathInputs, configured?: string): string {
  return vaultChoice(home, inputs, configured).path;
}

/** The vault file and where its path came from (resolveVault's rule). */
export function vaultChoice(
  home: string,
  inputs: PathInputs,
  configured?: string,
): { path: string; source: VaultSource } {
  const chosen = inputs.env.BOX_VAULT;
  if (chosen !== undefined && chosen !== "") {
    return { path: absolute(chosen, "BOX_VAULT"), source: "BOX_VAULT" };
  }
  if (configured !== undefined) {
    return { path: absolute(configured, "[vault] path"), source: "[vault] path" };
  }
  if (inputs.root && home === ROOT_HOME) return { path: ROOT_VAULT, source: "machine" };
  return { path: `${home}/vault.env`, source: "home" };
}

/** Why the vault is where it is, as `gurt config` and `gurt serve` say it. */
export function vaultWhy(from: VaultSource): string {
  if (from === "BOX_VAULT") return "from BOX_VAULT";
  if (from === "[vault] path") return "from gurt.toml's [vault] path";
  if (from === "machine") {
    return `the machine's, for the box home ${ROOT_HOME}; BOX_VAULT or [vault] path names another`;
  }
  return "this box home's own; BOX_VAULT or [vault] path names another";
}

function absolute(path: string, what: string): string {
  if (!path.startsWith("/")) {
    throw new Error(`${what} must be an absolute path, got ${JSON.stringify(path)}`);
  }
  return path === "/" ? path : trimSlash(path);
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.replace(/\/+$/, "") : path;
}
