/**
 * The vault of a running core: the keys read from the vault file at start, the owner's changes
 * written through atomically and in effect at once, the per-app deny list, the declared-secret
 * check, and the redactor built from the current values. No method returns a value except
 * `readSecret` and the core's own `view`.
 */
import { Mutex } from "../common/mod.ts";
import { type DenyList, policyPath, readDenyList, writeDenyList } from "./deny_policy.ts";
import { checkAppName, checkKeyName, VaultNameError } from "./names.ts";
import { Redactor } from "./redactor.ts";
import { readVaultFile, type VaultOwner, writeVaultFile } from "./vault_file.ts";
import {
  keysOf,
  parseVaultText,
  renderVaultText,
  type VaultDocument,
  withKey,
  withoutKey,
} from "./vault_text.ts";

/** One key as the owner sees it: its name, when it was set, and the apps denied it. */
export interface VaultKeyListing {
  name: string;
  set: string;
  denied_apps: string[];
}

/** Where the vault is and who may own it. */
export interface VaultOptions {
  /** The vault file (Config.vault). */
  path: string;
  /** The box home, which holds vault-policy.json. */
  home: string;
  /** The user that must own the vault: the process's own. */
  owner: VaultOwner;
  clock?: () => Date;
}

/** The vault as the core's paths see it: values by name, never listed with their values. */
export interface VaultView {
  /** The value of a vault key, or undefined when it is not set. */
  value(name: string): string | undefined;
  /** The names of the keys that are set. */
  names(): string[];
}

/** How an app tool reads a secret: throws for a key the tool did not declare or may not read. */
export type SecretReader = (app: string, declared: readonly string[], name: string) => string;

/** A secret was asked for that the tool did not declare, that is denied, or that is not set. */
export class SecretRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretRefusedError";
  }
}

/** The longest value the vault keeps, in characters. */
const MAX_VALUE = 64 * 1024;

/** The vault of one core. */
export class Vault {
  #keys: Map<string, string>;
  #setTimes: Map<string, string>;
  #deny: DenyList;
  #redactor: Redactor;
  readonly #lock = new Mutex();
  readonly #clock: () => Date;

  private constructor(
    readonly options: VaultOptions,
    state: { keys: Map<string, string>; setTimes: Map<string, string>; deny: DenyList },
  ) {
    this.#keys = state.keys;
    this.#setTimes = state.setTimes;
    this.#deny = state.deny;
    this.#redactor = Redactor.forEntries(this.#keys);
    this.#clock = options.clock ?? (() => new Date());
  }

  /** Reads the vault (creating it empty if missing) and the deny list; throws if either is unsafe. */
  static async open(options: VaultOptions): Promise<Vault> {
    const { document, keys } = await readChecked(options);
    const deny = await readDenyList(policyPath(options.home));
    return new Vault(options, { keys, setTimes: document.setTimes, deny });
  }

  /** The core's own view: values by name (the model endpoint's key), names. */
  view(): VaultView {
    return {
      value: (name) => this.#keys.get(name),
      names: () => [...this.#keys.keys()],
    };
  }

  /** The redactor of the current values. */
  redactor(): Redactor {
    return this.#redactor;
  }

  /** `text` with every current secret value, in every form, replaced by `[a vault key]`. */
  redact(text: string): string {
    return this.#redactor.redact(text);
  }

  /** The reader behind every tool's `ctx.secret`. */
  readonly readSecret: SecretReader = (app, declared, name) => {
    if (!declared.includes(name)) {
      throw new SecretRefusedError(
        `the vault key ${name} is not among the secrets this tool of ${app} declares ` +
          `(${declared.length === 0 ? "none" : declared.join(", ")}), so it cannot read it; ` +
          `see runbook.md#secret-refused`,
      );
    }
    if (this.#deny.get(app)?.has(name) === true) {
      throw new SecretRefusedError(
        `the box owner has turned off the vault key ${name} for the app ${app}, so it cannot ` +
          `read it; see runbook.md#secret-refused`,
      );
    }
    const value = this.#keys.get(name);
    if (value === undefined) {
      throw new SecretRefusedError(
        `the vault key ${name} is not set on this box; the owner sets it with ` +
          `gurt vault set ${name}; see runbook.md#secret-refused`,
      );
    }
    return value;
  };

  /** Every key's name, set time and denied apps, sorted by name. Never a value. */
  list(): VaultKeyListing[] {
    return [...this.#keys.keys()].sort().map((name) => ({
      name,
      set: this.#setTimes.get(name) ?? "unknown",
      denied_apps: [...this.#deny.entries()].filter(([, names]) => names.has(name))
        .map(([app]) => app).sort(),
    }));
  }

  /** Whether the key is set. */
  has(name: string): boolean {
    return this.#keys.has(name);
  }

  /**
   * Sets a key: `record` runs first (the audit record) and then the file is rewritten from its
   * current content; the new value takes effect at once. Throws without changing anything when
   * the name or value is not valid, `record` throws, or the file cannot be written.
   */
  async set(name: string, value: string, record: () => Promise<void>): Promise<void> {
    checkKeyName(name);
    checkValue(value);
    await this.#lock.exclusive(async () => {
      const { document } = await readChecked(this.options);
      const time = this.#clock().toISOString();
      await record();
      const next = withKey(document, { name, value, time });
      await writeVaultFile(this.options.path, renderVaultText(next));
      this.#apply(keysOf(next), next.setTimes);
    });
  }

  /** Removes a key; false (and nothing recorded) when it was not set. */
  async remove(name: string, record: () => Promise<void>): Promise<boolean> {
    checkKeyName(name);
    return await this.#lock.exclusive(async () => {
      const { document, keys } = await readChecked(this.options);
      if (!keys.has(name)) {
        this.#apply(keys, document.setTimes);
        return false;
      }
      await record();
      const next = withoutKey(document, name);
      await writeVaultFile(this.options.path, renderVaultText(next));
      this.#apply(keysOf(next), next.setTimes);
      return true;
    });
  }

  /** Turns a key off (deny) or on again (allow) for one app; `record` runs before the write. */
  async setDenied(
    app: string,
    name: string,
    options: { denied: boolean; record: () => Promise<void> },
  ): Promise<void> {
    checkAppName(app);
    checkKeyName(name);
    await this.#lock.exclusive(async () => {
      await options.record();
      const next: DenyList = new Map([...this.#deny].map(([a, names]) => [a, new Set(names)]));
      const names = next.get(app) ?? new Set<string>();
      if (options.denied) names.add(name);
      else names.delete(name);
      next.set(app, names);
      await writeDenyList(policyPath(this.options.home), next);
      this.#deny = next;
    });
  }

  #apply(keys: Map<string, string>, setTimes: Map<string, string>): void {
    const changed = keys.size !== this.#keys.size ||
      [...keys].some(([name, value]) => this.#keys.get(name) !== value);
    for (const name of keys.keys()) {
      if (!setTimes.has(name)) setTimes.set(name, this.#setTimes.get(name) ?? "unknown");
    }
    this.#keys = keys;
    this.#setTimes = setTimes;
    if (changed) this.#redactor = Redactor.forEntries(keys);
  }
}

/** Reads, checks and parses the vault; keys without a set comment get the file's last change. */
async function readChecked(
  options: VaultOptions,
): Promise<{ document: VaultDocument; keys: Map<string, string> }> {
  const { text, modified } = await readVaultFile(options.path, options.owner);
  const parsed = parseVaultText(text, options.path);
  const keys = keysOf(parsed);
  const setTimes = new Map<string, string>();
  for (const name of keys.keys()) {
    const time = parsed.setTimes.get(name) ?? modified?.toISOString();
    if (time !== undefined) setTimes.set(name, time);
  }
  return { document: { lines: parsed.lines, setTimes }, keys };
}

function checkValue(value: string): void {
  if (value.length === 0) throw new VaultNameError("the value is empty; give the key's value");
  if (value.length > MAX_VALUE) {
    throw new VaultNameError(`the value is longer than ${MAX_VALUE} characters`);
  }
  if (/[\r\n\0]/.test(value)) {
    throw new VaultNameError(
      "the value holds a line break or a NUL character, which a vault line cannot keep; " +
        "give the value on one line",
    );
  }
}
