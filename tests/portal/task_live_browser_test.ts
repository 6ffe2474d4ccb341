/**
 * The portal's owner side as issue 31 asks, in a real browser (Debian's Chromium through
 * playwright-core) against a real core: an approval card says who asked and why, in dollars; the
 * task page is live (a new approval, the owner's answer, the result and the spend arrive without a
 * reload), reads as sentences and tables of fields, says who answered, and is whole without
 * JavaScript; the taint and grant words carry their help. Screenshots under
 * tests/artifacts/portal/.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { grant, pendingApproval } from "../kit/mod.ts";
import { type PortalBox, startPortalBox } from "./helpers.ts";

const ARTIFACTS = new URL("../artifacts/portal/", import.meta.url).pathname;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function signedIn(
  browser: Browser,
  pb: PortalBox,
  options: { javaScript: boolean } = { javaScript: true },
): Promise<Page> {
  const context = await browser.newContext({
    viewport: DESKTOP,
    javaScriptEnabled: options.javaScript,
  });
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  await page.goto(await pb.link());
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${pb.origin}/approvals`);
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

const PROMPT = "Pay the <b>bakery</b> for Friday\nsecond line, not on the card";

Deno.test({
  name: "the portal in Chromium: cards say who asked and why, the task page is live and readable",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const pb = await startPortalBox({
      grants: { spend: grant({ tool: "example.spend", mode: "ask" }) },
    });
    try {
      await t.step(
        "an approval card shows the task's prompt, worker, spend and budget, and the cost in dollars",
        async () => {
          const task = await pb.box.startTask({
            tools: ["example.spend"],
            budgetCents: 5000,
            prompt: PROMPT,
          });
          const call = task.send("example.spend", { cents: 1999, payee: "bakery" }, "k1");
          const id = await pendingApproval(pb.box, task, 30_000);
          const page = await signedIn(browser, pb);
          const card = page.locator(`#approval-${id}`);
          const text = await card.innerText();
          assertStringIncludes(text, "Pay the <b>bakery</b> for Friday …");
          assertNotIncludes(text, "second line");
          assertEquals(await card.locator("b").count(), 0, "the prompt's markup was not escaped");
          assertEquals(await card.locator("dd.worker").innerText(), "none");
          assertEquals(await card.locator("dd.spent").innerText(), "$0.00 of $50.00");
          assertEquals(await card.locator("dd.cost").innerText(), "$19.99");
          assertNotIncludes(await page.locator("main").innerText(), "¢");
          // The jargon: the taint's line of help and its title, naming the docs' heading.
          const taint = card.locator(".help-term");
          assertStringIncludes(await taint.innerText(), "docs/grants.md#taint");
          assertStringIncludes((await taint.getAttribute("title")) ?? "", "sensitive");
          await shoot(page, "approval-card");
          await card.getByRole("button", { name: "Approve" }).click();
          await page.waitForURL(/answered=/);
          assertEquals((await call.answer).ok, true);
          await page.context().close();
          await pb.box.admin("POST", `/tasks/${task.id}/stop`);
        },
      );

      await t.step(
        "the task page streams in a new approval, the owner's answer, the result and the spend, and says who answered",
        async () => {
          const task = await pb.box.startTask({
            tools: ["example.spend"],
            budgetCents: 5000,
            prompt: PROMPT,
          });
          await task.request("POST", "/step", { text: "looking for the invoice" });
          const page = await signedIn(browser, pb);
          await page.goto(`${pb.origin}/tasks/${task.id}`);
          await page.locator("ol.journal", { hasText: "step looking for the invoice" }).waitFor();
          assertEquals(await page.locator("#task-state").innerText(), "running");
          await page.evaluate("window.sameDocument = true");

          // A call that waits on the owner: the page shows it without a reload.
          const call = task.send("example.spend", { cents: 1999, payee: "bakery" }, "k1");
          const id = await pendingApproval(pb.box, task, 30_000);
          const waiting = page.locator("ol.journal pre", {
            hasText: `approval ${id} is waiting: example.spend`,
          });
          await waiting.waitFor();
          await page.locator("#task-state", { hasText: "waiting" }).waitFor();
          assertStringIncludes(
            await page.locator("#task-waiting").innerText(),
            `approval ${id}: example.spend, $19.99`,
          );
          for (const line of await page.locator("ol.journal pre").allInnerTexts()) {
            assert(
              !line.startsWith("event ") && !line.startsWith("{"),
              `JSON in the journal: ${line}`,
            );
          }
          await shoot(page, "task-live-waiting");

          // The owner answers elsewhere (gurt approve): the state, the result and the spend follow.
          await pb.box.admin("POST", `/approvals/${id}/approve`, { by: "gurt approve" });
          assertEquals((await call.answer).ok, true);
          await page.locator("#task-spent", { hasText: "$19.99 of $50.00" }).waitFor();
          await page.locator("#task-state", { hasText: "running" }).waitFor();
          await page.locator("ol.journal pre", { hasText: "cost $19.99" }).waitFor();
          assertEquals(await page.locator("#task-waiting").innerText(), "none");
          assertEquals(await page.evaluate("window.sameDocument"), true, "the page was reloaded");

          // Who answered, and the audit records as a table of fields, the Approval record's too.
          await page.locator("#task-answered", {
            hasText: `approval ${id}: approved by the owner, with gurt approve`,
          }).waitFor();
          const records = await page.locator("#task-live table").innerText();
          assertNotIncludes(records, '{"type"');
          assertStringIncludes(records, "answered by");
          assertStringIncludes(records, "the owner, with gurt approve");
          await shoot(page, "task-live-answered");
          await page.context().close();
          await pb.box.admin("POST", `/tasks/${task.id}/stop`);
        },
      );

      await t.step(
        "without JavaScript the task page is rendered whole by the server, the answer in it",
        async () => {
          const task = await pb.box.startTask({ tools: ["example.spend"], prompt: PROMPT });
          const call = task.send("example.spend", { cents: 250 }, "k1");
          const id = await pendingApproval(pb.box, task, 30_000);
          const page = await signedIn(browser, pb, { javaScript: false });
          await page.locator(`#approval-${id}`).getByRole("button", { name: "Approve" }).click();
          await page.waitForURL(/answered=/);
          assertEquals((await call.answer).ok, true);
          // A refusal in the portal is recorded as the portal's, not as gurt refuse's.
          const second = task.send("example.spend", { cents: 300 }, "k2");
          const refused = await pendingApproval(pb.box, task, 30_000);
          await page.goto(`${pb.origin}/approvals`);
          await page.locator(`#approval-${refused}`).getByRole("button", { name: "Refuse" })
            .click();
          await page.waitForURL(/answered=/);
          assertEquals((await second.answer).ok, false);
          await page.goto(`${pb.origin}/tasks/${task.id}`);
          const main = await page.locator("main").innerText();
          assertStringIncludes(main, `approval ${id} is waiting: example.spend`);
          assertStringIncludes(main, "cost $2.50");
          assertStringIncludes(
            await page.locator("#task-answered").innerText(),
            `approval ${id}: approved by the owner, in the portal`,
          );
          assertStringIncludes(
            await page.locator("#task-answered").innerText(),
            `approval ${refused}: refused by the owner, in the portal`,
          );
          assertStringIncludes(await page.locator("#task-spent").innerText(), "$2.50 (no budget)");
          await shoot(page, "task-no-script");
          await page.context().close();
          await pb.box.admin("POST", `/tasks/${task.id}/stop`);
        },
      );

      await t.step("the Grants page explains max taint and result beside each grant", async () => {
        const page = await signedIn(browser, pb);
        await page.goto(`${pb.origin}/grants`);
        const label = page.locator("td .help-term").first();
        const text = await label.innerText();
        assertStringIncludes(text, "max taint");
        assertStringIncludes(text, "docs/grants.md#fields");
        assertStringIncludes((await label.getAttribute("title")) ?? "", "taint rises");
        await shoot(page, "grants-help");
        await page.context().close();
      });
    } finally {
      await pb.close();
      await browser.close();
    }
  },
});
