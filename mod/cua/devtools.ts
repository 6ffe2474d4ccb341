/** Chromium's DevTools HTTP endpoint on loopback: is it up, and which page is in front. */

/** Reads the DevTools endpoint at 127.0.0.1:`port`, each call capped at `timeoutMs`. */
export class DevTools {
  constructor(readonly port: number, private readonly timeoutMs = 250) {}

  /** Whether GET /json/version answers with a Browser field (within `timeoutMs` if given). */
  async ready(options: { timeoutMs?: number } = {}): Promise<boolean> {
    const body = await this.#get("/json/version", options.timeoutMs ?? this.timeoutMs);
    return body !== undefined && typeof (body as { Browser?: unknown }).Browser === "string";
  }

  /** The URL of the most recently activated page, or undefined if Chromium does not answer. */
  async activeUrl(): Promise<string | undefined> {
    const body = await this.#get("/json/list", this.timeoutMs);
    if (!Array.isArray(body)) return undefined;
    const page = body.find((entry) => entry?.type === "page" && typeof entry.url === "string");
    return page?.url;
  }

  async #get(path: string, timeoutMs: number): Promise<unknown> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await fetch(`http://127.0.0.1:${this.port}${path}`, {
        signal: controller.signal,
      });
      if (!response.ok) {
        await response.body?.cancel();
        return undefined;
      }
      return await response.json();
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
