/**
 * README.md's roles table says what ROLE_TABLE (mod/roles/table.ts) gives each role: the same
 * roles and commands, every path a role may read or write named in its cells, its network and
 * whether it runs programs. Each row's permissions are computed for places with known names, and
 * each value is turned into the words README uses for it.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  adminSocketPath,
  loadConfig,
  ownerTokenPath,
  portalAddrPath,
} from "../../mod/config/mod.ts";
import { desktopOptionsFromEnv } from "../../mod/cua/options.ts";
import { SYSTEM_PATHS } from "../../mod/runtime/mod.ts";
import { TASK_ETC_PATHS } from "../../mod/sandbox/mod.ts";
import {
  codeDir,
  ROLE_TABLE,
  type RoleName,
  type RolePermissions,
  type RoleTable,
} from "../../mod/roles/mod.ts";

/** The role column's words for each role. */
const LABELS: Record<RoleName, string> = {
  core: "core",
  worker: "worker",
  relay: "relay",
  "app-host": "app-host",
  cli: "owner CLI",
  guest: "guest",
  portal: "portal",
  "stand-in": "stand-in",
  "egress-client": "laptop",
};

interface ReadmeRow {
  role: string;
  command: string;
  reads: string;
  writes: string;
  network: string;
  runs: string;
}

const README = new URL("../../README.md", import.meta.url);

/** The rows of the table under `## Roles`. */
async function readmeRows(): Promise<ReadmeRow[]> {
  const text = await Deno.readTextFile(README);
  const start = text.indexOf("\n## Roles\n");
  assert(start !== -1, "README.md has no ## Roles section");
  const section = text.slice(start + 1, text.indexOf("\n## ", start + 1));
  const cells = (line: string) => line.slice(1, -1).split("|").map((cell) => cell.trim());
  const [header, _rule, ...body] = section.split("\n").filter((line) => line.startsWith("|"));
  assertEquals(cells(header), ["role", "command", "reads", "writes", "network", "runs programs"]);
  return body.map((line) => {
    const [role, command, reads, writes, network, runs] = cells(line);
    return { role, command, reads, writes, network, runs };
  });
}

// Places whose values name themselves, so each path can be told back in README's words.
const home = "/box-home";
const vault = "/vault-folder/vault.env";
const socket = "/box-home/tasks/t1/broker.sock";
const workspace = "/guest-workspace";
const config = loadConfig({ home, env: { BOX_VAULT: vault }, root: false });
const desktop = desktopOptionsFromEnv({}, { workspace, home: "/guest-home" });
const guestPlaces = {
  workspace,
  bind: "0.0.0.0",
  ports: [1337, 1340],
  tokenFiles: ["/token-file"],
};

/** README's words for each value a permission list holds, with the places above. */
const WORDS = new Map<string, string>([
  [codeDir(), "its code"],
  [home, "the box home"],
  ["/vault-folder", "the vault's folder"],
  ["/etc/passwd", "`/etc/passwd`"],
  ["/etc/group", "`/etc/group`"],
  ["/proc", "`/proc`"],
  ...SYSTEM_PATHS.filter((path) => path !== "/etc/passwd" && path !== "/etc/group")
    .map((path): [string, string] => [path, "the system paths the sandbox mounts"]),
  // A task's sandbox mounts more of /etc (TLS, hosts), and Deno's own binary, gurt's runtime.
  ...[...TASK_ETC_PATHS, Deno.execPath()]
    .map((path): [string, string] => [path, "the system paths the sandbox mounts"]),
  [socket, "its task socket"],
  [`unix:${socket}`, "its task socket"],
  ["127.0.0.1:4100", "its task's model endpoint"],
  ["/box-home/tasks/t1/home", "its task's home"],
  ["/usr/local/lib/gurt/agents/claude", "its agent's folder"],
  ["/script-file", "its script"],
  [config.file, "`gurt.toml`"],
  [`${home}/audit`, "`audit/`"],
  [`${home}/grants`, "`grants/`"],
  [`${home}/credentials`, "`credentials/`"],
  [adminSocketPath(home), "the admin socket"],
  [`unix:${adminSocketPath(home)}`, "the admin socket"],
  ["/checkpoint-file", "that file"],
  ["/app-folder", "the folder it adds"],
  [`${home}/apps/one/tools.json`, "each app's `tools.json`"],
  [ownerTokenPath(home), "the owner token"],
  [portalAddrPath(home), "`run/portal.addr`"],
  [`${home}/run/approvals-open.json`, "`run/approvals-open.json`"],
  [workspace, "the workspace"],
  ["/token-file", "its token files"],
  ["/tmp/.X11-unix", "the X socket"],
  ["/tmp/.X11-unix/X1", "the X socket"],
  ["unix:/tmp/.X11-unix/X1", "the X display"],
  ["/guest-home/chrome-profile", "the Chromium profile"],
  ["0.0.0.0:1337", "its two ports"],
  ["0.0.0.0:1340", "its two ports"],
  ["127.0.0.1:7780", "its loopback port"],
  ["127.0.0.1:8089", "its loopback port"],
  ["/box-home/apps/notes", "its app's folder"],
  ["/box-home/apps/notes/home", "its app's home"],
  ["api.notes.example:443", "its app's hosts"],
  ["127.0.0.1:3128", "the proxy to them"],
  ["127.0.0.1", "loopback"],
  ["[::1]", "loopback"],
  ["localhost", "loopback"],
  ["/egress-token-file", "its token file"],
]);

/** Every row of the table with its permissions for the places above, in each form it takes. */
function computed(): { name: keyof RoleTable; role: RoleName; permissions: RolePermissions }[] {
  const t = ROLE_TABLE;
  const owner = { config };
  return [
    { name: "serve", role: t.serve.role, permissions: t.serve.permissions({ config }) },
    {
      name: "loop",
      role: t.loop.role,
      permissions: t.loop.permissions({ socket, modelEndpoints: ["127.0.0.1:4100"] }),
    },
    {
      name: "test-worker",
      role: t["test-worker"].role,
      permissions: t["test-worker"].permissions({ socket, files: ["/script-file"] }),
    },
    {
      name: "agent-run",
      role: t["agent-run"].role,
      permissions: t["agent-run"].permissions({
        socket,
        home: "/box-home/tasks/t1/home",
        agentDir: "/usr/local/lib/gurt/agents/claude",
        binary: "/usr/local/lib/gurt/agents/claude/node_modules/.bin/claude",
      }),
    },
    { name: "mcp", role: t.mcp.role, permissions: t.mcp.permissions({ socket }) },
    {
      name: "app-host",
      role: t["app-host"].role,
      permissions: t["app-host"].permissions({
        module: "/box-home/apps/notes/app.ts",
        home: "/box-home/apps/notes/home",
        hosts: ["api.notes.example:443"],
        proxies: ["127.0.0.1:3128"],
      }),
    },
    {
      name: "guest",
      role: t.guest.role,
      permissions: t.guest.permissions({ ...guestPlaces, desktop: null }),
    },
    {
      name: "guest",
      role: t.guest.role,
      permissions: t.guest.permissions({ ...guestPlaces, desktop }),
    },
    ...(["approvals", "task", "task watch", "vault", "app", "grants", "config", "portal"] as const)
      .map(
        (name) => ({ name, role: t[name].role, permissions: t[name].permissions(owner) }),
      ),
    {
      name: "app",
      role: t.app.role,
      permissions: t.app.permissions({ config, files: ["/app-folder"] }),
    },
    {
      name: "grants",
      role: t.grants.role,
      permissions: t.grants.permissions({ config, files: [`${home}/apps/one/tools.json`] }),
    },
    {
      name: "audit",
      role: t.audit.role,
      permissions: t.audit.permissions({ config, files: ["/checkpoint-file"] }),
    },
    {
      name: "portal-serve",
      role: t["portal-serve"].role,
      permissions: t["portal-serve"].permissions({ home, listen: "127.0.0.1:7780" }),
    },
    {
      name: "model-stand-in",
      role: t["model-stand-in"].role,
      permissions: t["model-stand-in"].permissions({ hostname: "127.0.0.1", port: 8089 }),
    },
    {
      name: "egress-tunnel",
      role: t["egress-tunnel"].role,
      permissions: t["egress-tunnel"].permissions({ tokenFile: "/egress-token-file" }),
    },
  ];
}

function listOf(value: string[] | boolean): string[] {
  return Array.isArray(value) ? value : [];
}

Deno.test("README's roles table has one row per role of mod/roles/table.ts, with its commands", async () => {
  const rows = await readmeRows();
  const starts = Object.values(ROLE_TABLE) as RoleTable[keyof RoleTable][];
  const roles = [...new Set(starts.map((start) => start.role))];
  assertEquals(rows.map((row) => row.role).sort(), roles.map((role) => LABELS[role]).sort());
  for (const row of rows) {
    // `gurt config`, `approvals`, `task …`, `gurt guest [--desktop]`: the first word after gurt.
    const said = [...row.command.matchAll(/`(?:gurt )?([a-z-]+)[^`]*`/g)].map((m) => m[1]);
    const role = roles.find((name) => LABELS[name] === row.role)!;
    const commands = starts.filter((start) => start.role === role)
      .flatMap((start) => start.commands);
    assertEquals(said.sort(), [...new Set(commands)].sort(), `the ${row.role} row's commands`);
  }
});

Deno.test("README's roles table names every path each role may read or write, its network, and whether it runs programs", async () => {
  const rows = await readmeRows();
  const rowOf = (role: RoleName) => rows.find((row) => row.role === LABELS[role])!;
  const missing: string[] = [];
  const wordsFor = (value: string) => {
    const words = WORDS.get(value);
    assert(words !== undefined, `the test has no words for ${value}: add them to WORDS`);
    return words;
  };
  for (const { name, role, permissions } of computed()) {
    const row = rowOf(role);
    const check = (kind: "reads" | "writes" | "network", values: string[]) => {
      for (const value of values) {
        if (!row[kind].includes(wordsFor(value))) {
          missing.push(`${name}: ${kind} ${value} ("${wordsFor(value)}")`);
        }
      }
    };
    check("reads", listOf(permissions.read));
    check("writes", listOf(permissions.write));
    check("network", listOf(permissions.net));
    if (permissions.net === true && !row.network.startsWith("yes")) {
      missing.push(`${name}: network is whole, the row says ${row.network}`);
    }
    if (permissions.run !== false && !row.runs.startsWith("yes")) {
      missing.push(`${name}: runs programs, the row says ${row.runs}`);
    }
  }
  for (const role of Object.keys(LABELS) as RoleName[]) {
    const all = computed().filter((row) => row.role === role);
    if (all.length === 0) continue;
    const row = rowOf(role);
    if (all.every((one) => one.permissions.run === false) && row.runs !== "no") {
      missing.push(`${role}: runs no program, the row says ${row.runs}`);
    }
  }
  assertEquals(missing, []);
});
