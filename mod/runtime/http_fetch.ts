/**
 * http_fetch, run in the core (never in the sandbox): https only; the host matched against the
 * grant's patterns, again for every redirect before it is followed; every address the host
 * resolves to checked (no private range, none of the box's own addresses, read at each fetch),
 * and the connection pinned to those addresses (no second lookup to rebind);
 * a size cap and a time limit over the whole fetch. Certificates are always verified; tests give
 * their own CA.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import https from "node:https";
import type { IncomingMessage } from "node:http";
import type { LookupFunction } from "node:net";
import { hostMatches, parseUrl } from "../policy/mod.ts";
import { isOwnAddress, isRestrictedAddress } from "./address_ranges.ts";
import { RunError, type RunOutput } from "./run_spec.ts";

/** The limits of http_fetch, from gurt.toml's [runtime]. */
export interface FetchSettings {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /**
   * Hosts that may resolve to loopback, private, link-local or unique-local addresses, or to one
   * of the box's own.
   */
  allowPrivateHosts: readonly string[];
}

/**
 * For tests: a CA to trust instead of the system's, a resolver, the port to connect to, and the
 * box's own addresses instead of its interfaces'.
 */
export interface FetcherOptions {
  ca?: string;
  resolve?: (host: string) => Promise<string[]>;
  port?: number;
  boxAddresses?: () => string[];
}

/** Every address assigned to the box's interfaces now, IPv4 and IPv6, loopback included. */
export function boxAddresses(): string[] {
  return Deno.networkInterfaces().map((entry) => entry.address);
}

/** The fixed sentences of http_fetch's failures. */
export const FETCH_ERRORS = {
  badUrl: "the URL is not an https URL that http_fetch can fetch",
  hostNotGranted: "the URL's host is not one the grant allows",
  redirectRefused:
    "the site redirected to a URL the grant does not allow, so gurt did not follow it; see runbook.md#fetch-redirect-refused",
  tooManyRedirects: "the site redirected too many times",
  unresolved: "the host name could not be resolved",
  privateAddress:
    "the host resolves to an address of this box, or to a loopback, private, link-local or unique-local address, which http_fetch does not reach; see runbook.md#fetch-private-address",
  boxAddressesUnknown:
    "gurt could not read this box's own addresses, so http_fetch reaches no host that is not in allow_private_hosts; see runbook.md#fetch-private-address",
  unreachable: "the site could not be reached over https with a valid certificate",
  timedOut: "the fetch took longer than the time limit and was stopped",
} as const;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Fetches URLs for http_fetch under the settings. */
export class HttpFetcher {
  readonly #settings: FetchSettings;
  readonly #options: FetcherOptions;

  constructor(settings: FetchSettings, options: FetcherOptions = {}) {
    this.#settings = settings;
    this.#options = options;
  }

  /** Fetches `url`, following redirects only to hosts that match `hosts`. */
  async fetch(url: string, hosts: readonly string[]): Promise<RunOutput> {
    try {
      return await this.#fetch(url, hosts);
    } catch (error) {
      // Whatever else went wrong, the model gets a sentence of gurt's, never a library's message
      // (which can quote what the server sent, such as a certificate's names).
      if (error instanceof RunError) throw error;
      throw new RunError(FETCH_ERRORS.unreachable);
    }
  }

  async #fetch(url: string, hosts: readonly string[]): Promise<RunOutput> {
    const deadline = AbortSignal.timeout(this.#settings.timeoutMs);
    let current = url;
    for (let hop = 0; hop <= this.#settings.maxRedirects; hop++) {
      const refusal = hop === 0 ? null : FETCH_ERRORS.redirectRefused;
      const form = parseUrl(current);
      if ("problem" in form) throw new RunError(refusal ?? FETCH_ERRORS.badUrl);
      if (!hosts.some((pattern) => hostMatches(form.host, pattern))) {
        throw new RunError(refusal ?? FETCH_ERRORS.hostNotGranted);
      }
      const addresses = await this.#addresses(form.host);
      const response = await this.#get(current, form.host, addresses, deadline);
      const location = response.headers.location;
      if (REDIRECTS.has(response.statusCode ?? 0) && typeof location === "string") {
        response.destroy();
        try {
          current = new URL(location, current).href;
        } catch {
          throw new RunError(FETCH_ERRORS.redirectRefused);
        }
        continue;
      }
      return await this.#body(response, deadline);
    }
    throw new RunError(FETCH_ERRORS.tooManyRedirects);
  }

  async #addresses(host: string): Promise<string[]> {
    let addresses: string[];
    try {
      addresses = this.#options.resolve !== undefined
        ? await this.#options.resolve(host)
        : (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      throw new RunError(FETCH_ERRORS.unresolved);
    }
    if (addresses.length === 0) throw new RunError(FETCH_ERRORS.unresolved);
    if (this.#settings.allowPrivateHosts.includes(host)) return addresses;
    // Read at every fetch, not at start: an interface may gain an address while the core runs.
    let own: string[];
    try {
      own = (this.#options.boxAddresses ?? boxAddresses)();
    } catch {
      throw new RunError(FETCH_ERRORS.boxAddressesUnknown);
    }
    const refused = (address: string) => isRestrictedAddress(address) || isOwnAddress(address, own);
    if (addresses.some(refused)) throw new RunError(FETCH_ERRORS.privateAddress);
    return addresses;
  }

  #get(
    url: string,
    host: string,
    addresses: string[],
    deadline: AbortSignal,
  ): Promise<IncomingMessage> {
    const target = new URL(url);
    const pinned = addresses.map((address) => ({
      address,
      family: address.includes(":") ? 6 : 4,
    }));
    const lookup: LookupFunction = (_name, options, callback) => {
      if (options.all) callback(null, pinned);
      else callback(null, pinned[0].address, pinned[0].family);
    };
    return new Promise((resolve, reject) => {
      const request = https.request({
        host,
        servername: host,
        port: this.#options.port ?? 443,
        path: `${target.pathname}${target.search}`,
        method: "GET",
        headers: { "user-agent": "gurt http_fetch", "accept-encoding": "identity" },
        ca: this.#options.ca,
        agent: false,
        signal: deadline,
        // The connection goes only to the addresses checked above.
        lookup,
      }, resolve);
      request.on("error", () => {
        reject(new RunError(deadline.aborted ? FETCH_ERRORS.timedOut : FETCH_ERRORS.unreachable));
      });
      request.end();
    });
  }

  #body(response: IncomingMessage, deadline: AbortSignal): Promise<RunOutput> {
    const max = this.#settings.maxBytes;
    return new Promise((resolve, reject) => {
      const chunks: Uint8Array[] = [];
      let kept = 0;
      let truncated = false;
      let settled = false;
      const fail = (): void => {
        if (settled) return;
        settled = true;
        reject(new RunError(deadline.aborted ? FETCH_ERRORS.timedOut : FETCH_ERRORS.unreachable));
      };
      const finish = (): void => {
        if (settled) return;
        settled = true;
        const bytes = new Uint8Array(kept);
        let offset = 0;
        for (const chunk of chunks) {
          bytes.set(chunk, offset);
          offset += chunk.length;
        }
        const type = response.headers["content-type"] ?? "";
        const head = `HTTP ${response.statusCode}${type === "" ? "" : ` ${type}`}`;
        resolve({ content: `${head}\n\n${new TextDecoder().decode(bytes)}`, truncated });
      };
      response.on("data", (chunk: Uint8Array) => {
        if (truncated) return;
        const room = max - kept;
        const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
        chunks.push(part);
        kept += part.length;
        if (chunk.length > room) {
          truncated = true;
          response.destroy();
          finish();
        }
      });
      response.on("end", finish);
      response.on("error", fail);
      response.on("close", () => {
        if (response.complete) finish();
        else fail();
      });
    });
  }
}
