/**
 * A box with apps (tests/apps/app_kit.ts: a real `gurt serve` with its own vault) and a portal in
 * front of its admin socket, as `gurt serve` starts one; a signed-in browser session over plain
 * HTTP; and a small MCP server, written here, whose tools carry the text a test needs.
 */
import { adminSocketPath } from "../../mod/config/mod.ts";
import { ensureOwnerToken, type Portal, startPortal } from "../../mod/portal/mod.ts";
import { type AppBox, startAppBox } from "../apps/app_kit.ts";
import { assertEquals } from "../assert.ts";
import { HIDDEN_SHOWN, HIDDEN_TEXT } from "../kit/mod.ts";
import { signInTo } from "./helpers.ts";

/** A box with apps and its portal. */
export interface AppPortal {
  box: AppBox;
  portal: Portal;
  origin: string;
  /** A fresh one-time sign-in link, as `gurt portal` prints it. */
  link(): Promise<string>;
  /** Signs in over plain HTTP: the cookie header value and the session's CSRF token. */
  signIn(): Promise<{ cookie: string; csrf: string }>;
  close(): Promise<void>;
}

/** Starts a box with apps and a portal on a free loopback port. */
export async function startAppPortal(): Promise<AppPortal> {
  const box = await startAppBox();
  let portal: Portal;
  try {
    portal = await startPortal({
      listen: "127.0.0.1:0",
      socket: adminSocketPath(box.home),
      token: await ensureOwnerToken(box.home),
      log: () => {},
    });
  } catch (error) {
    await box.close();
    throw error;
  }
  return {
    box,
    portal,
    ...signInTo(portal.origin, box.home),
    async close() {
      await portal.close();
      await box.close();
    },
  };
}

/** One tool the probe server lists. */
export interface ProbeTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/**
 * A stdio MCP server in plain node (no package): it answers initialize, tools/list with `tools`,
 * and tools/call; a call of `crash` writes `crashLine` on stderr and exits with status 3.
 */
export function probeServer(tools: ProbeTool[], crashLine: string): string {
  return `#!/usr/bin/node
"use strict";
const tools = ${JSON.stringify(tools)};
const crashLine = ${JSON.stringify(crashLine)};
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\\n");
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const id = message.id;
  if (message.method === "initialize") {
    send({ id, result: {
      protocolVersion: message.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: "probe", version: "1.0.0" },
    } });
  } else if (message.method === "tools/list") {
    send({ id, result: { tools } });
  } else if (message.method === "tools/call") {
    if (message.params.name === "crash") {
      process.stderr.write(crashLine + "\\n", () => process.exit(3));
      return;
    }
    send({ id, result: { content: [{ type: "text", text: "ok" }] } });
  } else if (message.method === "ping") {
    send({ id, result: {} });
  } else {
    send({ id, error: { code: -32601, message: "no such method" } });
  }
});
`;
}

/** The echo tool's description: markup, a forged line of the page's facts, hidden characters. */
export const DESCRIPTION = `Echoes a message.<script>window.pwned = 1</script>\n` +
  `Read-only: yes\nCost: free${HIDDEN_TEXT}`;
/** How the page shows it: one line, escaped. */
export const DESCRIPTION_SHOWN = String.raw`Echoes a message.<script>window.pwned = 1</script>\n` +
  String.raw`Read-only: yes\nCost: free${HIDDEN_SHOWN}`;
/** The server's last line on stderr before it exits: markup, a carriage return, hidden characters. */
export const CRASH_LINE = `<img src=x onerror="window.pwned=2">\rState: running${HIDDEN_TEXT}`;

/** Installs the probe app `probe` with two keys (PROBE_TOKEN set, MISSING_TOKEN removed after) and a host. */
export async function addProbe(ap: AppPortal): Promise<void> {
  await ap.box.setKey("PROBE_TOKEN", "probe-secret-value-0123456789");
  // An app starts only with every key it reads: MISSING_TOKEN goes once the app is in.
  await ap.box.setKey("MISSING_TOKEN", "missing-secret-value-0123456789");
  const server = probeServer([
    {
      name: "echo",
      description: DESCRIPTION,
      inputSchema: { type: "object", properties: { message: { type: "string" } } },
      annotations: { readOnlyHint: true },
    },
    { name: "charge", description: "Charges.", inputSchema: { type: "object" } },
    { name: "crash", description: "Exits.", inputSchema: { type: "object" } },
    { name: "long", description: `${"long ".repeat(600)}end`, inputSchema: { type: "object" } },
    { name: "<b>bad</b> tool", description: "Never offered.", inputSchema: { type: "object" } },
  ], CRASH_LINE);
  const source = await ap.box.source(
    "probe",
    [
      'kind = "mcp"',
      'description = "The portal\'s probe <i>app</i>"',
      'command = ["./server.js"]',
      'hosts = ["api.example.com"]',
      "[secrets.PROBE_TOKEN]",
      'env = "PROBE_TOKEN"',
      "[secrets.MISSING_TOKEN]",
      'env = "MISSING_TOKEN"',
      "[tools.charge]",
      "cost_cents = 3",
      "",
    ].join("\n"),
    { "server.js": server },
  );
  const added = await ap.box.add(source, "probe");
  assertEquals(added.status, 200, JSON.stringify(added.body));
  assertEquals((await ap.box.admin("DELETE", "/api/vault/MISSING_TOKEN")).status, 200);
}
