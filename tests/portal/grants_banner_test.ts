/**
 * While the grant files are invalid, every signed-in page of the portal shows a banner that says
 * every call is denied and names the first problem (escaped); it goes once they are fixed.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { chromium } from "playwright-core";
import { grant } from "../kit/mod.ts";
import { PAGES } from "../../mod/portal/pages/layout.tsx";
import { startPortalBox } from "./helpers.ts";

const BANNER = "The grant files are invalid: every call of every task is denied.";

Deno.test("every signed-in page shows the invalid-grants banner, escaped, until the files are fixed", async () => {
  // A tool name with markup in it: the banner shows it as text.
  const typo = grant({ tool: "<b>example.echo</b>" });
  const box = await startPortalBox({ grants: { echo: typo } });
  try {
    const { cookie } = await box.signIn();
    for (const page of PAGES) {
      const response = await fetch(`${box.origin}${page.path}`, { headers: { cookie } });
      const html = await response.text();
      // This box has no app manager: /apps answers with its error page, which shows it too.
      assertEquals(
        response.status,
        page.path === "/apps" ? 400 : 200,
        `${page.path} ${response.status}`,
      );
      assertStringIncludes(html, BANNER, page.path);
      assertStringIncludes(
        html,
        "echo.toml:1: tool: &quot;&lt;b&gt;example.echo&lt;/b&gt;&quot; is not a tool",
        page.path,
      );
      assert(!html.includes("<b>example.echo"), `${page.path} shows the tool as markup`);
      // At the top of the page's main part, before its heading.
      assert(html.indexOf(BANNER) < html.indexOf("<h1>"), page.path);
    }
    // Not signed in: the sign-in page says nothing of the box.
    const login = await (await fetch(`${box.origin}/login`)).text();
    assert(!login.includes(BANNER), "the sign-in page shows the banner");

    await Deno.writeTextFile(`${box.box.home}/grants/echo.toml`, grant({ tool: "example.echo" }));
    const fixed = await (await fetch(`${box.origin}/tasks`, { headers: { cookie } })).text();
    assert(!fixed.includes(BANNER), "the banner stays after the fix");
  } finally {
    await box.close();
  }
});

Deno.test({
  name: "in Chromium, the banner is the first thing of each page's main part, seen and announced",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const artifacts = new URL("../artifacts/portal/", import.meta.url).pathname;
    await Deno.mkdir(artifacts, { recursive: true });
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const typo = grant({ tool: "example.echo" }).replace("result_class", "resultclass");
    const box = await startPortalBox({ grants: { echo: typo } });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(await box.link());
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${box.origin}/approvals`);
      for (const path of ["/approvals", "/tasks", "/grants"]) {
        await page.goto(`${box.origin}${path}`);
        const alert = page.locator("main > .grants-banner[role=alert]");
        assert(await alert.isVisible(), `${path}: the banner is not shown`);
        const text = await alert.innerText();
        assertStringIncludes(text, BANNER);
        assertStringIncludes(text, "resultclass: unknown field; did you mean result_class?");
        await page.screenshot({ path: `${artifacts}grants-banner${path.replace("/", "-")}.png` });
      }
    } finally {
      await box.close();
      await browser.close();
    }
  },
});
