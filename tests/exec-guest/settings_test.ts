/** The guest's settings: defaults, tokens and their _FILE forms, and refusals with runbook pointers. */
import { assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import {
  GUEST_DEFAULTS,
  type GuestFlags,
  GuestSettingsError,
  loadGuestSettings,
  tokenFilesIn,
} from "../../mod/exec-guest/mod.ts";

const flags: GuestFlags = { workspace: "/ws", bind: "127.0.0.1", execPort: 1337, hostPort: 1340 };
const files: Record<string, string> = { "/run/token": "from-file\n", "/run/empty": "  \n" };
const sources = (env: Record<string, string>) => ({
  env,
  readTextFile: (path: string) => {
    if (path in files) return files[path];
    throw new Deno.errors.NotFound(`no ${path}`);
  },
});

Deno.test("with only BOX_TOKEN every knob takes the seed's default and the host shares the token", () => {
  const settings = loadGuestSettings(flags, sources({ BOX_TOKEN: "t" }));
  assertEquals(settings.token, "t");
  assertEquals(settings.hostToken, "t");
  assertEquals(settings.killGraceMs, 2000);
  assertEquals(settings.maxOutputBytes, 8 * 1024 * 1024);
  assertEquals(settings.defaultTimeoutMs, 30_000);
  assertEquals(settings.maxTimeoutMs, 600_000);
  assertEquals(settings.maxConcurrentExecs, 8);
  assertEquals(settings.maxFileBytes, 10 * 1024 * 1024);
  assertEquals(settings.maxDirEntries, 4096);
  assertEquals(settings.corsOrigins, []);
  assertEquals(settings.desktopRequired, false);
  assertEquals(settings.boxId, GUEST_DEFAULTS.boxId);
});

Deno.test("every knob is read from its environment variable", () => {
  const settings = loadGuestSettings(
    flags,
    sources({
      BOX_TOKEN: "t",
      BOX_HOST_TOKEN: "h",
      BOX_EXEC_KILL_GRACE_MS: "5",
      BOX_MAX_OUTPUT_BYTES: "10",
      BOX_DEFAULT_TIMEOUT_MS: "20",
      BOX_MAX_TIMEOUT_MS: "30",
      BOX_MAX_CONCURRENT_EXECS: "2",
      BOX_MAX_FILE_BYTES: "40",
      BOX_MAX_DIR_ENTRIES: "50",
      BOX_EXEC_RETENTION_MS: "60",
      BOX_CORS_ORIGINS: "https://a.example, http://localhost:3000",
      BOX_DESKTOP_REQUIRED: "1",
      BOX_ID: "box-7",
    }),
  );
  assertEquals(
    [
      settings.hostToken,
      settings.killGraceMs,
      settings.maxOutputBytes,
      settings.defaultTimeoutMs,
      settings.maxTimeoutMs,
      settings.maxConcurrentExecs,
      settings.maxFileBytes,
      settings.maxDirEntries,
      settings.execRetentionMs,
      settings.desktopRequired,
      settings.boxId,
    ],
    ["h", 5, 10, 20, 30, 2, 40, 50, 60, true, "box-7"],
  );
  assertEquals(settings.corsOrigins, ["https://a.example", "http://localhost:3000"]);
});

Deno.test("the _FILE forms are read and trimmed; the direct variable wins", () => {
  const fromFile = loadGuestSettings(
    flags,
    sources({ BOX_TOKEN_FILE: "/run/token", BOX_HOST_TOKEN_FILE: "/run/token" }),
  );
  assertEquals(fromFile.token, "from-file");
  assertEquals(fromFile.hostToken, "from-file");
  const direct = loadGuestSettings(
    flags,
    sources({ BOX_TOKEN: "d", BOX_TOKEN_FILE: "/run/token" }),
  );
  assertEquals(direct.token, "d");
  assertEquals(tokenFilesIn({ BOX_TOKEN_FILE: "/a", BOX_HOST_TOKEN_FILE: "", X: "/b" }), ["/a"]);
});

Deno.test("no token at all, an unreadable or empty token file: the guest refuses to start", () => {
  const envs: Record<string, string>[] = [
    {},
    { BOX_TOKEN: "" },
    { BOX_TOKEN_FILE: "/nope" },
    { BOX_TOKEN_FILE: "/run/empty" },
  ];
  for (const env of envs) {
    const error = assertThrows(() => loadGuestSettings(flags, sources(env)), GuestSettingsError);
    assertStringIncludes(error.message, "see runbook.md#guest-token-missing");
  }
});

Deno.test("a knob that does not parse names its variable and points to the runbook", () => {
  const cases: [Record<string, string>, string][] = [
    [{ BOX_MAX_OUTPUT_BYTES: "8MiB" }, "BOX_MAX_OUTPUT_BYTES"],
    [{ BOX_MAX_CONCURRENT_EXECS: "0" }, "BOX_MAX_CONCURRENT_EXECS"],
    [{ BOX_DESKTOP_REQUIRED: "yes" }, "BOX_DESKTOP_REQUIRED"],
    [{ BOX_CORS_ORIGINS: "*" }, "BOX_CORS_ORIGINS"],
    [{ BOX_DEFAULT_TIMEOUT_MS: "700000" }, "BOX_DEFAULT_TIMEOUT_MS"],
  ];
  for (const [env, name] of cases) {
    const error = assertThrows(
      () => loadGuestSettings(flags, sources({ BOX_TOKEN: "t", ...env })),
      GuestSettingsError,
    );
    assertStringIncludes(error.message, name);
    assertStringIncludes(error.message, "see runbook.md#guest-settings-invalid");
  }
});
