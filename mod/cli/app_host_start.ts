/**
 * `gurt app-host MODULE` without the rest of the command line: the core starts a module app at its
 * first call, and the call waits for it, so main.ts runs a plain `gurt app-host MODULE` here before
 * it loads the CLI (as `gurt mcp` does, mcp_start.ts). It reads the places of the role's permissions
 * from the environment the core gives the app: GURT_APP_HOME (else HOME), GURT_APP_HOSTS, and the
 * proxy variables.
 */
import { parseHostEntry } from "../config/host_entry.ts";
import { type AppHostPlaces, launchRole, ROLE_TABLE } from "../roles/mod.ts";

/** The module's path if `args` is a plain `gurt app-host MODULE`, else null. */
export function plainAppHostModule(args: readonly string[]): string | null {
  if (args[0] !== "app-host" || args.length !== 2 || args[1].startsWith("-")) return null;
  return args[1];
}

/** The proxy variables whose proxy the role may reach, when it may reach any host. */
const PROXY_VARIABLES = [
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "ALL_PROXY",
  "all_proxy",
];

const DEFAULT_PROXY_PORTS: Record<string, string> = {
  "http:": "80",
  "https:": "443",
  "socks5:": "1080",
  "socks5h:": "1080",
};

/**
 * The app host's places from its module's path and its environment: the module by its absolute
 * path, its home, each host of GURT_APP_HOSTS (comma-separated, as a task's --hosts) as Deno's
 * net permission spells it, and the proxies the environment names. Throws a sentence for a host
 * list entry that is not one.
 */
export function appHostPlaces(module: string, env: Record<string, string>): AppHostPlaces {
  const path = module.startsWith("/") ? module : `${Deno.cwd()}/${module}`;
  const home = env.GURT_APP_HOME || env.HOME || null;
  const hosts: string[] = [];
  for (const entry of (env.GURT_APP_HOSTS ?? "").split(",").map((h) => h.trim())) {
    if (entry === "") continue;
    const parsed = parseHostEntry(entry);
    if ("problem" in parsed) {
      throw new Error(
        `GURT_APP_HOSTS: ${
          JSON.stringify(entry)
        } ${parsed.problem}; see runbook.md#app-module-invalid`,
      );
    }
    const host = parsed.kind === "ip" && parsed.host.includes(":")
      ? `[${parsed.host}]`
      : parsed.host;
    for (const port of parsed.ports) hosts.push(`${parsed.wildcard ? "*." : ""}${host}:${port}`);
  }
  const proxies = new Set<string>();
  for (const name of PROXY_VARIABLES) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      continue; // not a proxy any client would use
    }
    const port = url.port || DEFAULT_PROXY_PORTS[url.protocol];
    if (url.hostname !== "" && port !== undefined) proxies.add(`${url.hostname}:${port}`);
  }
  return { module: path, home, hosts, proxies: [...proxies] };
}

/** Runs the app-host role for the module at `module`; resolves with its status. */
export function runAppHost(module: string): Promise<number> {
  const places = appHostPlaces(module, Deno.env.toObject());
  return launchRole(ROLE_TABLE["app-host"], {
    places,
    args: { module: places.module, home: places.home },
  });
}

/** Runs the app host and exits with its status; an error is one line and status 1. */
export async function appHostMain(module: string): Promise<never> {
  let status: number;
  try {
    status = await runAppHost(module);
  } catch (error) {
    console.error(`gurt: ${error instanceof Error ? error.message : String(error)}`);
    status = 1;
  }
  Deno.exit(status);
}
