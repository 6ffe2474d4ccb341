/**
 * The Apps pages in a real browser (Debian's Chromium through playwright-core) against a real
 * `gurt serve` with a real app: found from the navigation, its server's text shown as data (no
 * script of it runs, no hidden character reaches the page), a key's switch, turning the app off
 * and on, and removing it after the page asks; screenshots at desktop and phone widths under
 * tests/artifacts/, none scrolling sideways on a phone.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { HIDDEN } from "../kit/mod.ts";
import { addProbe, type AppPortal, DESCRIPTION_SHOWN, startAppPortal } from "./app_portal_kit.ts";

const ARTIFACTS = new URL("../artifacts/portal", import.meta.url).pathname;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function signedIn(browser: Browser, ap: AppPortal): Promise<Page> {
  const context = await browser.newContext({ viewport: DESKTOP });
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  await page.goto(await ap.link());
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${ap.origin}/approvals`);
  return page;
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: `${ARTIFACTS}${name}-desktop.png`, fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: `${ARTIFACTS}${name}-phone.png`, fullPage: true });
  const overflow = await page.evaluate<number>(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  );
  assert(overflow <= 0, `${name} scrolls sideways on a phone by ${overflow}px`);
  await page.setViewportSize(DESKTOP);
}

async function assertClean(page: Page): Promise<void> {
  assertEquals(await page.evaluate("typeof window.pwned"), "undefined", "the app's script ran");
  const text = await page.locator("main").innerText();
  for (const char of HIDDEN) {
    assert(!text.includes(char), `a raw U+${char.codePointAt(0)!.toString(16)} is on the page`);
  }
}

Deno.test({
  name: "the Apps pages in Chromium: an app's facts as data, its key switch, off and on, removed",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const ap = await startAppPortal();
    try {
      await addProbe(ap);
      const page = await signedIn(browser, ap);
      await page.getByRole("navigation").getByRole("link", { name: "Apps" }).click();
      await page.waitForURL(`${ap.origin}/apps`);
      const row = page.locator("tbody tr");
      assertEquals(await row.count(), 1);
      assertEquals(
        await row.locator("td").allInnerTexts(),
        [
          "probe",
          "mcp",
          "on",
          (await ap.box.admin("GET", "/apps/probe")).body.app.state,
          "4",
          "none",
        ],
      );
      await shoot(page, "apps");

      await page.getByRole("link", { name: "probe" }).click();
      await page.waitForURL(`${ap.origin}/apps/probe`);
      const echo = page.locator("li.tool", { has: page.locator("h3", { hasText: "probe.echo" }) });
      assertEquals(await echo.locator(".tool-description").innerText(), DESCRIPTION_SHOWN);
      assertEquals(
        await page.locator("dd.description").innerText(),
        "The portal's probe <i>app</i>",
      );
      await echo.getByText("Input schema").click();
      assertStringIncludes(await echo.locator("pre").innerText(), '"message": {');
      await assertClean(page);
      await shoot(page, "app");

      const off = page.getByRole("switch", { name: "PROBE_TOKEN: on, turn off" });
      assertEquals(await off.getAttribute("aria-checked"), "true");
      await off.click();
      await page.waitForURL(/done=off/);
      assertStringIncludes(
        await page.getByRole("status").innerText(),
        "The key PROBE_TOKEN was turned off for this app.",
      );
      const vault = await ap.box.admin("GET", "/api/vault");
      const key = (vault.body.keys as { name: string; denied_apps: string[] }[])
        .find((entry) => entry.name === "PROBE_TOKEN");
      assertEquals(key?.denied_apps, ["probe"]);
      await page.getByRole("switch", { name: "PROBE_TOKEN: off, turn on" }).click();
      await page.waitForURL(/done=on/);
      assertEquals(
        await page.getByRole("switch", { name: "PROBE_TOKEN: on, turn off" }).getAttribute(
          "aria-checked",
        ),
        "true",
      );

      await page.getByRole("button", { name: "Turn probe off" }).click();
      await page.waitForURL(/done=disabled/);
      assertEquals(await page.locator("dd.enabled").innerText(), "off: turned off by the owner");
      assertEquals((await ap.box.admin("GET", "/apps/probe")).body.app.enabled, false);
      await page.getByRole("button", { name: "Turn probe on" }).click();
      await page.waitForURL(/done=enabled/);
      assertEquals((await ap.box.admin("GET", "/apps/probe")).body.app.enabled, true);

      await page.getByRole("link", { name: "Remove probe…" }).click();
      await page.waitForURL(`${ap.origin}/apps/probe/remove`);
      await shoot(page, "app-remove");
      await page.getByRole("link", { name: "No, keep probe" }).click();
      await page.waitForURL(`${ap.origin}/apps/probe`);
      assertEquals((await ap.box.admin("GET", "/apps/probe")).status, 200);
      await page.getByRole("link", { name: "Remove probe…" }).click();
      await page.getByRole("button", { name: "Yes, remove probe" }).click();
      await page.waitForURL(/\/apps\?done=removed/);
      assertStringIncludes(await page.locator("main").innerText(), "No app is installed.");
      assertEquals((await ap.box.admin("GET", "/apps")).body.apps, []);
      await page.context().close();
    } finally {
      await ap.close();
      await browser.close();
    }
  },
});
