/**
 * The box tool names an app's kept tool list (apps/<name>/tools.json) makes, for `gurt grants
 * check` and `gurt grants explain` when the core is not running: a server's tool name in snake
 * case, and none for a name that makes no verb or that two of its tools make. This file imports
 * nothing, so the owner's command loads it alone.
 */

const VERB = /^[a-z][a-z0-9_]{0,63}$/;

/** The box verb of a server's tool name, or null when it makes none. */
export function boxVerb(serverName: string): string | null {
  // One _ at a time: gurt mcp writes the box's `.` as `__`, which a verb must not hold.
  const verb = serverName.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()
    .replace(/[^a-z0-9_]/g, "_").replace(/_+/g, "_");
  return VERB.test(verb) ? verb : null;
}

/**
 * The `<app>.<verb>` names of a kept tool list (tools.json's parsed JSON), as the core offers
 * them; [] for anything that is not a list. (The core also leaves out a tool whose input schema
 * does not compile; that is not checked here.)
 */
export function keptToolNames(app: string, listed: unknown): string[] {
  if (!Array.isArray(listed)) return [];
  const count = new Map<string, number>();
  for (const tool of listed) {
    const name = (tool as { name?: unknown } | null)?.name;
    if (typeof name !== "string" || name.length > 128) continue;
    const verb = boxVerb(name);
    if (verb !== null) count.set(verb, (count.get(verb) ?? 0) + 1);
  }
  return [...count].filter(([, n]) => n === 1).map(([verb]) => `${app}.${verb}`).sort();
}
