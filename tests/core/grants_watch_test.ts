/**
 * A mistyped grant file is said at once (runbook.md#grants-invalid): `gurt serve` prints each
 * problem at its start, and again when a grant file changes, before any task calls; and says when
 * the files are valid again. Every call is still denied while they are invalid.
 */
import { assert, assertStringIncludes } from "../assert.ts";
import { grant, makeHome, startServe, until } from "../kit/mod.ts";

const SAID = "grants: the grant files are invalid, so every call is denied with grants_invalid";

Deno.test({
  name:
    "gurt serve prints a grant file's problem at its start, when a file changes, and when it is fixed",
  sanitizeResources: false,
  fn: async () => {
    const typo = grant({ tool: "example.echo" }).replace("result_class", "resultclass");
    const home = await makeHome({
      prefix: "gurt-grants-watch-",
      dirs: ["grants"],
      files: { "grants/echo.toml": typo, "gurt.toml": '[portal]\nlisten = "127.0.0.1:0"\n' },
    });
    const serve = await startServe(home);
    try {
      const atStart = serve.stderr();
      assert(serve.exited === null, atStart);
      const ready = atStart.indexOf("admin socket ready");
      const said = atStart.indexOf(
        `${home}/grants/echo.toml:4: resultclass: unknown field; did you mean result_class?`,
      );
      assert(said !== -1 && said < ready, `said before the core is ready:\n${atStart}`);
      assertStringIncludes(atStart, `${SAID}; see runbook.md#grants-invalid`);

      // A second file goes wrong while the core runs: said without any call.
      await Deno.writeTextFile(
        `${home}/grants/spend.toml`,
        grant({ tool: "example.spend" }).replace('mode = "auto"', 'mode = "allow"'),
      );
      await until(() => serve.stderr().includes(`${home}/grants/spend.toml:2: mode:`), 20_000);

      // Both fixed: said once they are.
      await Deno.writeTextFile(`${home}/grants/echo.toml`, grant({ tool: "example.echo" }));
      await Deno.writeTextFile(`${home}/grants/spend.toml`, grant({ tool: "example.spend" }));
      await until(() => serve.stderr().includes("grants: the grant files are valid again"), 20_000);
    } finally {
      await serve.stop();
      await Deno.remove(home, { recursive: true });
    }
  },
});
