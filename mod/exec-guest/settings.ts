/**
 * The guest's settings: the flags of `gurt guest` and every environment knob (README.md#the-guest),
 * with its default. A value that does not parse stops the guest; a missing token stops it too.
 */

/** The flags of `gurt guest` the exec guest reads (the desktop's are mod/guest's GuestArgs). */
export interface GuestFlags {
  workspace: string;
  bind: string;
  execPort: number;
  hostPort: number;
  /** The session helper `gurt guest` wrote (session_helper.ts), or null to use util-linux setsid. */
  sessionHelper?: string | null;
  /** The files helper `gurt guest` wrote (files_helper.ts), or null: the file routes answer 503. */
  filesHelper?: string | null;
}

/** Everything the guest daemon runs with. */
export interface GuestSettings extends GuestFlags {
  /** The exec service's bearer token (BOX_TOKEN or BOX_TOKEN_FILE). */
  token: string;
  /** The host service's bearer token (BOX_HOST_TOKEN, else BOX_TOKEN). */
  hostToken: string;
  killGraceMs: number;
  maxOutputBytes: number;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  maxConcurrentExecs: number;
  maxFileBytes: number;
  maxDirEntries: number;
  /** How long a finished exec stays readable with GET /v1/exec/{id}. */
  execRetentionMs: number;
  corsOrigins: string[];
  desktopRequired: boolean;
  boxId: string;
}

/** The environment variables stripped from every child's environment (docs/guest-api.md#exec). */
export const SECRET_ENV = [
  "BOX_TOKEN",
  "BOX_TOKEN_FILE",
  "BOX_HOST_TOKEN",
  "BOX_HOST_TOKEN_FILE",
  "BOX_VNC_PASSWORD",
  "BOX_VNC_PASSWORD_FILE",
  "BOX_EGRESS_TOKEN",
];

/** The guest's defaults, as README.md#the-guest lists them. */
export const GUEST_DEFAULTS = {
  workspace: "/workspace",
  bind: "127.0.0.1",
  execPort: 1337,
  hostPort: 1340,
  killGraceMs: 2_000,
  maxOutputBytes: 8 * 1024 * 1024,
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 600_000,
  maxConcurrentExecs: 8,
  maxFileBytes: 10 * 1024 * 1024,
  maxDirEntries: 4096,
  execRetentionMs: 600_000,
  boxId: "local-dev",
} as const;

/** Why the guest will not start: the message ends with its runbook pointer. */
export class GuestSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GuestSettingsError";
  }
}

/** How settings read the world: the environment and token files. */
export interface SettingsSources {
  env: Record<string, string | undefined>;
  readTextFile: (path: string) => string;
}

/** The token-file variables a guest may read, where set; its permissions grant exactly these. */
export function tokenFilesIn(env: Record<string, string | undefined>): string[] {
  return ["BOX_TOKEN_FILE", "BOX_HOST_TOKEN_FILE"]
    .map((name) => env[name])
    .filter((path): path is string => path !== undefined && path !== "");
}

/** Reads and checks every setting; throws GuestSettingsError naming the variable that is wrong. */
export function loadGuestSettings(flags: GuestFlags, sources: SettingsSources): GuestSettings {
  const env = sources.env;
  const token = readSecret("BOX_TOKEN", sources);
  if (token === undefined) {
    throw new GuestSettingsError(
      "the guest will not start without a bearer token: set BOX_TOKEN or BOX_TOKEN_FILE; " +
        "see runbook.md#guest-token-missing",
    );
  }
  const hostToken = readSecret("BOX_HOST_TOKEN", sources) ?? token;
  const settings: GuestSettings = {
    ...flags,
    token,
    hostToken,
    killGraceMs: whole(env, "BOX_EXEC_KILL_GRACE_MS", GUEST_DEFAULTS.killGraceMs, 0),
    maxOutputBytes: whole(env, "BOX_MAX_OUTPUT_BYTES", GUEST_DEFAULTS.maxOutputBytes, 1),
    defaultTimeoutMs: whole(env, "BOX_DEFAULT_TIMEOUT_MS", GUEST_DEFAULTS.defaultTimeoutMs, 1),
    maxTimeoutMs: whole(env, "BOX_MAX_TIMEOUT_MS", GUEST_DEFAULTS.maxTimeoutMs, 1),
    maxConcurrentExecs: whole(
      env,
      "BOX_MAX_CONCURRENT_EXECS",
      GUEST_DEFAULTS.maxConcurrentExecs,
      1,
    ),
    maxFileBytes: whole(env, "BOX_MAX_FILE_BYTES", GUEST_DEFAULTS.maxFileBytes, 1),
    maxDirEntries: whole(env, "BOX_MAX_DIR_ENTRIES", GUEST_DEFAULTS.maxDirEntries, 1),
    execRetentionMs: whole(env, "BOX_EXEC_RETENTION_MS", GUEST_DEFAULTS.execRetentionMs, 0),
    corsOrigins: origins(env.BOX_CORS_ORIGINS),
    desktopRequired: flag(env, "BOX_DESKTOP_REQUIRED"),
    boxId: env.BOX_ID || GUEST_DEFAULTS.boxId,
  };
  if (settings.defaultTimeoutMs > settings.maxTimeoutMs) {
    throw invalid(
      "BOX_DEFAULT_TIMEOUT_MS",
      `is ${settings.defaultTimeoutMs}, above BOX_MAX_TIMEOUT_MS (${settings.maxTimeoutMs})`,
    );
  }
  return settings;
}

/**
 * A secret setting: `name` itself, else the trimmed text of the file `name_FILE` names; undefined
 * when neither is set. Throws GuestSettingsError for a file that cannot be read or is empty.
 */
export function readSecret(name: string, sources: SettingsSources): string | undefined {
  const direct = sources.env[name];
  if (direct !== undefined && direct !== "") return direct;
  const file = sources.env[`${name}_FILE`];
  if (file === undefined || file === "") return undefined;
  let text: string;
  try {
    text = sources.readTextFile(file);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new GuestSettingsError(
      `${name}_FILE names ${file}, which cannot be read (${why}); ` +
        "see runbook.md#guest-token-missing",
    );
  }
  const value = text.trim();
  if (value === "") {
    throw new GuestSettingsError(
      `${name}_FILE names ${file}, which is empty; see runbook.md#guest-token-missing`,
    );
  }
  return value;
}

function whole(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]{1,15}$/.test(raw) || Number(raw) < min) {
    throw invalid(name, `must be a whole number of at least ${min}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function flag(env: Record<string, string | undefined>, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "" || raw === "0") return false;
  if (raw === "1") return true;
  throw invalid(name, `must be 0 or 1, got ${JSON.stringify(raw)}`);
}

function origins(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === "") return [];
  const list = raw.split(",").map((origin) => origin.trim()).filter((origin) => origin !== "");
  for (const origin of list) {
    if (origin === "*" || !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw invalid(
        "BOX_CORS_ORIGINS",
        `must list exact origins such as https://app.example, got ${JSON.stringify(origin)}`,
      );
    }
  }
  return list;
}

function invalid(name: string, why: string): GuestSettingsError {
  return new GuestSettingsError(`${name} ${why}; see runbook.md#guest-settings-invalid`);
}
