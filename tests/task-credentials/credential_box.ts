/**
 * A box for tests of credentials on a task's own HTTPS (issue 32): a real core as root (each task in
 * its sandbox, as its own user), real HTTPS origins on loopback (tests/kit/https_origin.ts) reached
 * by name through [egress] resolve, the owner's credential rules in credentials/, and cmd tasks
 * whose shell scripts run git, curl and openssl against them through their egress proxy.
 */
import { assertEquals } from "../assert.ts";
import { gurt, type GurtRun, type Json, makeHome, startBox, type TestBox } from "../kit/mod.ts";
import { type HttpsOrigin, startHttpsOrigin } from "../kit/https_origin.ts";

/** A running box with its origins. */
export interface CredentialBox {
  box: TestBox;
  /** The origins by host. */
  origins: Record<string, HttpsOrigin>;
  /** Writes `credentials/<id>.toml`. */
  writeRule(id: string, toml: string): Promise<void>;
  /** Starts a cmd task running the sh `script`, given `credentials` and `hosts`: its id. */
  startScript(script: string, given: { credentials: string[]; hosts?: string[] }): Promise<string>;
  /** `gurt --home HOME ARGS`, the owner's CLI against the running core. */
  cli(args: string[]): Promise<GurtRun>;
  close(): Promise<void>;
}

/** Starts origins for `hosts` (each wanting `token`), and a box that reaches them by name. */
export async function startCredentialBox(options: {
  hosts: string[];
  token: string;
  vault: Record<string, string>;
  grants: Record<string, string>;
}): Promise<CredentialBox> {
  const origins: Record<string, HttpsOrigin> = {};
  try {
    for (const host of options.hosts) {
      origins[host] = await startHttpsOrigin({ host, token: options.token });
    }
  } catch (error) {
    for (const origin of Object.values(origins)) await origin.close();
    throw error;
  }
  const resolve = options.hosts.map((host) => `"${host}" = "127.0.0.1"`).join(", ");
  let box: TestBox;
  try {
    // The real vault file, so that the core redacts its values as it would on a box.
    const home = await makeHome({ prefix: "gurt-cred-" });
    const lines = Object.entries(options.vault).map(([name, value]) => `${name}=${value}\n`);
    await Deno.writeTextFile(`${home}/vault.env`, lines.join(""), { mode: 0o600 });
    box = await startBox({
      home,
      core: { asRoot: true },
      grants: options.grants,
      toml: `[egress]\nresolve = { ${resolve} }\nallow_private_hosts = ${
        JSON.stringify(options.hosts)
      }\n`,
    });
  } catch (error) {
    for (const origin of Object.values(origins)) await origin.close();
    throw error;
  }
  await Deno.mkdir(`${box.home}/credentials`, { recursive: true });
  return {
    box,
    origins,
    writeRule: (id, toml) => Deno.writeTextFile(`${box.home}/credentials/${id}.toml`, toml),
    async startScript(script, given) {
      const answer = await box.admin("POST", "/tasks", {
        worker: { kind: "cmd", command: ["/bin/sh", "-c", script] },
        tools: [],
        budgetCents: null,
        hosts: given.hosts ?? [],
        credentials: given.credentials,
      });
      assertEquals(answer.status, 200, JSON.stringify(answer.body));
      return (answer.body as Json).task.id;
    },
    cli: (args) => gurt(["--home", box.home, ...args]),
    async close() {
      await box.close();
      for (const origin of Object.values(origins)) await origin.close();
    },
  };
}

/** A rule file's text for the origin: its host and port, its CA, and the placement lines. */
export function ruleFor(origin: HttpsOrigin, lines: string[]): string {
  return [
    `host = "${origin.host}"`,
    `port = ${origin.port}`,
    `ca_file = "${origin.caFile}"`,
    ...lines,
  ].join("\n") + "\n";
}

/** The audit records of the box's tool `tool`, in order. */
export async function recordsOf(box: TestBox, type: string): Promise<Json[]> {
  return (await box.records()).map((record) => record.event).filter((event) => event.type === type);
}
