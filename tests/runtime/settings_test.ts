/** gurt.toml's [runtime] table: sane defaults, strict keys, and values checked. */
import { assertEquals, assertThrows } from "../assert.ts";
import { parseConfig } from "../../mod/config/mod.ts";

Deno.test("[runtime] defaults: 30 s, 512 MiB, 64 processes, 1 MiB of output, no private hosts", () => {
  assertEquals(parseConfig("gurt.toml", "").runtime, {
    timeout_ms: 30_000,
    memory_bytes: 512 * 1024 * 1024,
    max_processes: 64,
    max_output_bytes: 1024 * 1024,
    fetch_timeout_ms: 30_000,
    max_fetch_bytes: 5 * 1024 * 1024,
    max_redirects: 5,
    allow_private_hosts: [],
  });
});

Deno.test("[runtime] takes the owner's values and refuses unknown keys and bad values", () => {
  const config = parseConfig(
    "gurt.toml",
    '[runtime]\ntimeout_ms = 5000\nallow_private_hosts = ["printer.lan"]\n',
  );
  assertEquals(config.runtime.timeout_ms, 5000);
  assertEquals(config.runtime.allow_private_hosts, ["printer.lan"]);
  assertThrows(() => parseConfig("gurt.toml", "[runtime]\ntimeout = 5\n"), Error, "timeout");
  assertThrows(
    () => parseConfig("gurt.toml", "[runtime]\nmemory_bytes = 1024\n"),
    Error,
    "memory_bytes",
  );
  assertThrows(
    () => parseConfig("gurt.toml", '[runtime]\nallow_private_hosts = ["Printer.LAN"]\n'),
    Error,
    "allow_private_hosts",
  );
});
