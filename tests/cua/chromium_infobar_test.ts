/**
 * The guest's Chromium shows no "unsupported command-line flag: --no-sandbox" bar over its pages
 * (it took the first click), and two desktops share a machine, each with its own DevTools port and
 * profile. The bar's height is measured against a Chromium started beside it with the same
 * command line but the one flag that hides the bar, on a second real desktop (Xvfb, openbox): the
 * browser's own part of the window (outerHeight - innerHeight) is taller by the bar there.
 */
import { assert, assertEquals } from "../assert.ts";
import { chromium } from "playwright-core";
import { chromiumArgs } from "../../mod/cua/supervisor.ts";
import { freePort, hasXvfb, startDesktop } from "./fixture.ts";
import { until } from "../kit/mod.ts";

/** What the page's window says of the browser around it, over DevTools. */
async function browserChrome(port: number): Promise<{ chrome: number; browser: string }> {
  const browser = await chromium.connectOverCDP(`http://127.0.0.1:${port}`);
  try {
    const page = browser.contexts()[0].pages()[0];
    // A window still being maximized settles first: read until two reads agree.
    let last = -1;
    let chrome = -2;
    await until(async () => {
      last = chrome;
      chrome = Number(await page.evaluate("window.outerHeight - window.innerHeight"));
      return chrome === last && chrome > 0;
    }, { ms: 20_000, what: "the window's size settling" });
    const version = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json();
    return { chrome, browser: String(version["User-Agent"] ?? "") };
  } finally {
    await browser.close().catch(() => {});
  }
}

Deno.test({
  name:
    "the desktop's Chromium has no --no-sandbox bar, and a second desktop with its own DevTools port and profile runs beside it",
  ignore: !hasXvfb(),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const workspace = await Deno.makeTempDir({ prefix: "gurt-cua-infobar-" });
    const first = await startDesktop(workspace, { chromeProfile: `${workspace}/profile-a` });
    // The second desktop's own Chromium is started here, with the first's command line less the
    // flag that hides the bar.
    const second = await startDesktop(workspace, { chromeProfile: null });
    let baseline: Deno.ChildProcess | null = null;
    try {
      const port = freePort();
      assert(port !== first.options.cdpPort);
      const args = chromiumArgs({ ...second.options, cdpPort: port }, `${workspace}/profile-b`)
        .filter((arg) => arg !== "--test-type");
      baseline = new Deno.Command("chromium", {
        args,
        env: { DISPLAY: second.options.display, HOME: workspace },
        stdout: "null",
        stderr: "null",
      }).spawn();
      await until(async () => {
        try {
          return (await fetch(`http://127.0.0.1:${port}/json/version`)).ok;
        } catch {
          return false;
        }
      }, { ms: 30_000, what: "the second Chromium's DevTools" });
      const fixed = await browserChrome(first.options.cdpPort);
      const shown = await browserChrome(port);
      assertEquals(fixed.browser, shown.browser, "the same Chromium on both desktops");
      assert(
        fixed.chrome < shown.chrome,
        `the desktop's Chromium has ${fixed.chrome} px above its page, one with the bar ${shown.chrome} px`,
      );
      // Each has its own profile folder, in use.
      for (const profile of ["profile-a", "profile-b"]) {
        await Deno.lstat(`${workspace}/${profile}/SingletonLock`);
      }
    } finally {
      try {
        baseline?.kill("SIGKILL");
        await baseline?.status;
      } catch {
        // already gone
      }
      await second.desktop.stop();
      await first.desktop.stop();
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    }
  },
});
