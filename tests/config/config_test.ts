import { assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import {
  ConfigError,
  loadConfig,
  parseConfig,
  resolveHome,
  resolveVault,
} from "../../mod/config/mod.ts";
import { gurt, withHome } from "../kit/mod.ts";

Deno.test("an unknown key names the file, the line and the dotted key", () => {
  const text = "[approvals]\nttl_ms = 5\n\n# note\nttl_mz = 3\n";
  const error = assertThrows(() => parseConfig("/h/gurt.toml", text), ConfigError);
  assertEquals([error.file, error.line, error.key], ["/h/gurt.toml", 5, "approvals.ttl_mz"]);
  assertEquals(
    error.message,
    "/h/gurt.toml:5: approvals.ttl_mz: unknown key; see runbook.md#config-invalid",
  );
});

Deno.test("an unknown table is an error at its header line", () => {
  const error = assertThrows(() => parseConfig("g.toml", "\n[aproovals]\nx = 1\n"), ConfigError);
  assertEquals([error.line, error.key], [2, "aproovals"]);
});

Deno.test("a value of the wrong type names its line, key and the expected type", () => {
  const error = assertThrows(
    () => parseConfig("g.toml", '[broker]\nmax_body_bytes = "big"\n'),
    ConfigError,
  );
  assertEquals([error.line, error.key], [2, "broker.max_body_bytes"]);
  assertStringIncludes(error.message, "expected number");
});

Deno.test("TOML that does not parse reports the parser's line", () => {
  const error = assertThrows(
    () => parseConfig("g.toml", "[approvals]\nttl_ms = = 1\n"),
    ConfigError,
  );
  assertEquals(error.line, 2);
  assertStringIncludes(error.message, "not valid TOML");
});

Deno.test("an empty file gives every default", () => {
  const config = parseConfig("g.toml", "");
  assertEquals(config.approvals, { ttl_ms: 900_000, wait_ms: 150_000, max_per_task: 32 });
  assertEquals(config.broker, {
    max_body_bytes: 65_536,
    max_task_bytes: 20 * 1024 * 1024,
    max_model_requests: 4,
    door_connections: 128,
    header_timeout_ms: 10_000,
  });
  assertEquals(config.tasks, {
    worker_log_bytes: 4 * 1024 * 1024,
    memory_bytes: 4 * 1024 * 1024 * 1024,
    max_processes: 1024,
    cpus: 1,
    tmp_bytes: 1024 * 1024 * 1024,
    home_bytes: 8 * 1024 * 1024 * 1024,
    protected_paths: [],
  });
  // Not set: loadConfig fills in 127.0.0.1:7780 and says it was not chosen.
  assertEquals(config.portal, {});
});

Deno.test("[portal] listen not set is 127.0.0.1:7780, not chosen; set, it is chosen", async () => {
  await withHome(async (home) => {
    const config = loadConfig({ home, env: {}, root: false });
    assertEquals([config.portal.listen, config.portalListenSet], ["127.0.0.1:7780", false]);
    await Deno.writeTextFile(`${home}/gurt.toml`, '[portal]\nlisten = "127.0.0.1:7780"\n');
    const set = loadConfig({ home, env: {}, root: false });
    assertEquals([set.portal.listen, set.portalListenSet], ["127.0.0.1:7780", true]);
  });
});

Deno.test("the model request cap and the worker log's size are read, and nonsense is refused with its key", () => {
  const config = parseConfig(
    "g.toml",
    "[broker]\nmax_model_requests = 2\n[tasks]\nworker_log_bytes = 65536\n",
  );
  assertEquals(config.broker.max_model_requests, 2);
  assertEquals(config.tasks.worker_log_bytes, 65_536);
  for (
    const [text, key] of [
      ["[broker]\nmax_model_requests = 0\n", "broker.max_model_requests"],
      ["[broker]\nmax_model_requests = 1.5\n", "broker.max_model_requests"],
      ["[tasks]\nworker_log_bytes = 100\n", "tasks.worker_log_bytes"],
      ["[tasks]\nworker_lines = 100\n", "tasks.worker_lines"],
    ]
  ) {
    const error = assertThrows(() => parseConfig("g.toml", text), ConfigError);
    assertEquals([error.line, error.key], [2, key], text);
  }
});

Deno.test("a portal port above 65535 is refused at load, by `gurt config` too", async () => {
  for (const listen of ["127.0.0.1:99999", "[::1]:65536", "localhost:07780"]) {
    const error = assertThrows(
      () => parseConfig("g.toml", `[portal]\nlisten = "${listen}"\n`),
      ConfigError,
      "not a number from 0 (any free port) to 65535",
    );
    assertEquals([error.line, error.key], [2, "portal.listen"]);
  }
  for (const listen of ["127.0.0.1:65535", "[::1]:0", "localhost:7780"]) {
    parseConfig("g.toml", `[portal]\nlisten = "${listen}"\n`);
  }
  await withHome(async (home) => {
    const run = await gurt(["--home", home, "config"]);
    assertEquals(run.code, 1, run.stdout);
    assertStringIncludes(run.stderr, "portal.listen: has the port 99999");
    assertStringIncludes(run.stderr, "see runbook.md#config-invalid");
  }, { files: { "gurt.toml": '[portal]\nlisten = "127.0.0.1:99999"\n' } });
});

Deno.test("a portal address that is not loopback is refused", () => {
  assertThrows(
    () => parseConfig("g.toml", '[portal]\nlisten = "0.0.0.0:7780"\n'),
    ConfigError,
    "loopback",
  );
});

Deno.test("the home comes from --home, then BOX_HOME, then root's default, then XDG", () => {
  const env = { BOX_HOME: "/b", XDG_DATA_HOME: "/x", HOME: "/u" };
  assertEquals(resolveHome({ home: "/a/", env, root: true }), "/a");
  assertEquals(resolveHome({ env, root: true }), "/b");
  assertEquals(resolveHome({ env: { HOME: "/u" }, root: true }), "/var/lib/gurt");
  assertEquals(resolveHome({ env: { XDG_DATA_HOME: "/x", HOME: "/u" }, root: false }), "/x/gurt");
  assertEquals(resolveHome({ env: { HOME: "/u" }, root: false }), "/u/.local/share/gurt");
  assertThrows(() => resolveHome({ home: "rel", env, root: false }), Error, "absolute");
});

Deno.test("the vault is BOX_VAULT, else [vault] path, else /etc/box/vault.env as root with the default home, else in the home", () => {
  assertEquals(resolveVault("/h", { env: { BOX_VAULT: "/v.env" }, root: false }), "/v.env");
  assertEquals(
    resolveVault("/h", { env: { BOX_VAULT: "/v.env" }, root: true }, "/c.env"),
    "/v.env",
  );
  assertEquals(resolveVault("/h", { env: {}, root: true }, "/c.env"), "/c.env");
  assertEquals(resolveVault("/var/lib/gurt", { env: {}, root: true }), "/etc/box/vault.env");
  // A home of its own (a test's, a second box's) has its own vault, as root too.
  assertEquals(resolveVault("/h", { env: {}, root: true }), "/h/vault.env");
  assertEquals(resolveVault("/h", { env: {}, root: false }), "/h/vault.env");
  assertEquals(resolveVault("/var/lib/gurt", { env: {}, root: false }), "/var/lib/gurt/vault.env");
});

Deno.test("[vault] path in gurt.toml chooses the vault, and must be absolute", async () => {
  await withHome((home) => {
    const config = loadConfig({ home, env: {}, root: true });
    assertEquals([config.vault, config.vaultFrom], ["/srv/keys/vault.env", "[vault] path"]);
    const over = loadConfig({ home, env: { BOX_VAULT: "/v.env" }, root: true });
    assertEquals([over.vault, over.vaultFrom], ["/v.env", "BOX_VAULT"]);
    return Promise.resolve();
  }, { files: { "gurt.toml": '[vault]\npath = "/srv/keys/vault.env"\n' } });
  const error = assertThrows(
    () => parseConfig("g.toml", '[vault]\npath = "keys/vault.env"\n'),
    ConfigError,
    "absolute path",
  );
  assertEquals([error.line, error.key], [2, "vault.path"]);
});

Deno.test("BOX_APPROVAL_WAIT_MS overrides gurt.toml and must be a positive integer", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(`${home}/gurt.toml`, "[approvals]\nwait_ms = 1000\n");
    assertEquals(loadConfig({ home, env: {}, root: false }).approvals.wait_ms, 1000);
    const env = { BOX_APPROVAL_WAIT_MS: "250" };
    assertEquals(loadConfig({ home, env, root: false }).approvals.wait_ms, 250);
    for (const bad of ["0", "-1", "1.5", "soon"]) {
      const badEnv = { BOX_APPROVAL_WAIT_MS: bad };
      assertThrows(() => loadConfig({ home, env: badEnv, root: false }), ConfigError, "whole");
    }
  });
});

Deno.test("BOX_MODEL overrides gurt.toml's [models] model, says so in fromEnv, and must name a model", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(`${home}/gurt.toml`, '[models]\nmodel = "claude-haiku-4-5"\n');
    const plain = loadConfig({ home, env: {}, root: false });
    assertEquals([plain.models.model, plain.fromEnv], ["claude-haiku-4-5", undefined]);
    const set = loadConfig({ home, env: { BOX_MODEL: "claude-opus-4-5" }, root: false });
    assertEquals([set.models.model, set.fromEnv], ["claude-opus-4-5", {
      "models.model": "BOX_MODEL",
    }]);
    for (const bad of [" claude", "a b", "x\ny", "m".repeat(201)]) {
      const badEnv = { BOX_MODEL: bad };
      assertThrows(() => loadConfig({ home, env: badEnv, root: false }), ConfigError, "BOX_MODEL");
    }
  });
});

Deno.test("a task's limits are read, and a limit too small to run a worker is refused with its key", () => {
  const config = parseConfig(
    "g.toml",
    "[tasks]\nmemory_bytes = 1073741824\nmax_processes = 64\ncpus = 1.5\ntmp_bytes = 67108864\n",
  );
  assertEquals(config.tasks.memory_bytes, 1024 * 1024 * 1024);
  assertEquals(config.tasks.max_processes, 64);
  assertEquals(config.tasks.cpus, 1.5);
  assertEquals(config.tasks.tmp_bytes, 64 * 1024 * 1024);
  for (
    const [line, key] of [
      ["memory_bytes = 1024", "memory_bytes"],
      [
        "max_processes = 2",
        "max_processes",
      ],
      ["cpus = 0", "cpus"],
      ["home_bytes = 1024", "home_bytes"],
    ]
  ) {
    assertThrows(() => parseConfig("g.toml", `[tasks]\n${line}\n`), ConfigError, key);
  }
});
