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
  if (inputs.root) return "/var/lib/gurt";
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

/** The vault file: BOX_VAULT, else /etc/box/vault.env as root, else BOX_HOME/vault.env. */
export function resolveVault(home: string, inputs: PathInputs): string {
  const chosen = inputs.env.BOX_VAULT;
  if (chosen !== undefined && chosen !== "") return absolute(chosen, "BOX_VAULT");
  if (inputs.root) return "/etc/box/vault.env";
  return `${home}/vault.env`;
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
