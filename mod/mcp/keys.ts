/**
 * The relay's names and keys (docs/broker-api.md#keys-the-same-request-the-same-answer): MCP tool
 * names have `__` where gurt's have `.`; a call's key is `mcp.<tool>.<hash of the input>.<count>`,
 * a question's `mcp.ask.<hash of the question>`. The hash is Web Crypto's, which needs no import:
 * `gurt mcp` loads as little as it can before it answers (relay_main.ts).
 */

/** The MCP name of a gurt tool. */
export function mcpName(tool: string): string {
  return tool.replaceAll(".", "__");
}

/** The gurt tool of an MCP name. */
export function toolName(mcp: string): string {
  return mcp.replaceAll("__", ".");
}

/** JSON with object keys sorted, so the same input always hashes the same. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const fields = Object.keys(value).sort().map((k) =>
      `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`
    );
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The first 16 hex digits of the SHA-256 of `text`. */
export async function shortHash(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest).subarray(0, 8), (b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/**
 * Counts answered calls per tool and input. A call gets the count of answers before it plus one,
 * so asking again after a pending answer reuses the key (and joins the same approval), while a
 * deliberate second call of the same tool with the same input gets a key of its own.
 */
export class CallKeys {
  readonly #answered = new Map<string, number>();

  /** The key for a call of `tool` with `input`. */
  async key(tool: string, input: unknown): Promise<string> {
    const base = `mcp.${tool}.${await shortHash(canonical(input))}`;
    return `${base}.${(this.#answered.get(base) ?? 0) + 1}`;
  }

  /** Records that the call with `key` got a final (not pending) answer. */
  answered(key: string): void {
    const base = key.slice(0, key.lastIndexOf("."));
    this.#answered.set(base, (this.#answered.get(base) ?? 0) + 1);
  }
}

/** The key of a question. */
export async function askKey(question: string): Promise<string> {
  return `mcp.ask.${await shortHash(question)}`;
}
