/**
 * What the owner reads in the portal cannot be forged by a task (issue 34), and one task cannot
 * bury another's approvals (issue 36), in a real browser (Debian's Chromium through
 * playwright-core) against a real core: a step holding a result line and a question holding a copy
 * of an approval block on the task page, the characters of Unicode's hidden set on the Approvals
 * page, right-to-left letters shown in stored order, and the Approvals page's paging.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import {
  FORGED_BLOCK,
  FORGED_RESULT,
  grant,
  HIDDEN,
  HIDDEN_SHOWN,
  HIDDEN_TEXT,
  type TestTask,
  until,
} from "../kit/mod.ts";
import { type PortalBox, startPortalBox } from "./helpers.ts";

function assertNoHidden(text: string): void {
  for (const char of HIDDEN) {
    assert(!text.includes(char), `a raw U+${char.codePointAt(0)!.toString(16)} is on the page`);
  }
}

async function signedIn(browser: Browser, pb: PortalBox): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  await page.goto(await pb.link());
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${pb.origin}/approvals`);
  return page;
}

async function pendingOf(pb: PortalBox): Promise<{ approval: number; task: string }[]> {
  return (await pb.box.admin("GET", "/approvals")).body.items;
}

/** Sends a call that waits on the owner, and waits until its approval is in the table. */
async function asked(pb: PortalBox, task: TestTask, input: unknown, key: string): Promise<number> {
  const before = (await pendingOf(pb)).length;
  task.send("example.spend", input, key);
  let id = -1;
  await until(async () => {
    const items = await pendingOf(pb);
    id = items.at(-1)?.approval ?? -1;
    return items.length === before + 1;
  }, 30_000);
  return id;
}

/**
 * The left edges of the characters of `selector`'s first text, in stored order, for those on its
 * first row (a letter's box, not a space's).
 */
function edges(page: Page, selector: string): Promise<{ char: string; left: number }[]> {
  // Run in the page (a string, as this file is checked without the DOM's types).
  return page.evaluate(`(() => {
    const element = document.querySelector(${JSON.stringify(selector)});
    const node = document.createTreeWalker(element, NodeFilter.SHOW_TEXT).nextNode();
    const out = [];
    for (let i = 0; i < node.data.length; i++) {
      if (node.data[i] === " ") continue;
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getBoundingClientRect();
      out.push({ char: node.data[i], left: rect.left, top: rect.top });
    }
    return out.filter((entry) => entry.top === out[0].top)
      .map((entry) => ({ char: entry.char, left: entry.left }));
  })()`);
}

Deno.test({
  name: "the portal in Chromium shows a task's text as data, and pages the approvals by task",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const pb = await startPortalBox({
      grants: { spend: grant({ tool: "example.spend", mode: "ask" }) },
    });
    try {
      await t.step(
        "the task page: a step holding a result line and a question holding an approval block each stay on their own journal line",
        async () => {
          const task = await pb.box.startTask({ tools: ["example.spend"] });
          await task.request("POST", "/step", { text: `hello${FORGED_RESULT}` });
          await task.request("POST", "/ask", {
            key: "q1",
            question: `ok? ${HIDDEN_TEXT}${FORGED_BLOCK}`,
            waitMs: 1,
          });
          const page = await signedIn(browser, pb);
          await page.goto(`${pb.origin}/tasks/${task.id}`);
          const lines = await page.locator("ol.journal pre").allInnerTexts();
          const journal = (await pb.box.admin("GET", `/tasks/${task.id}`)).body.journal;
          assertEquals(lines.length, journal.length, lines.join("\n---\n"));
          for (const line of lines) assertNotIncludes(line, "\n");
          const step = lines.find((line) => line.startsWith("step hello"));
          assertEquals(
            step,
            'step hello\\n  12:00:02 result k2 example.spend {"ok":false,"error":"refused by the owner"} cost 0¢',
          );
          const question = lines.find((line) => line.startsWith("ask q1"))!;
          assertStringIncludes(question, `: ok? ${HIDDEN_SHOWN}\\n7  just now  expires in 15 min`);
          assertNoHidden(await page.locator("main").innerText());
          await page.context().close();
          await pb.box.admin("POST", `/tasks/${task.id}/stop`);
        },
      );

      await t.step(
        "the Approvals page: a payee holding U+061C, U+00AD, tag characters and overrides shows them escaped",
        async () => {
          const task = await pb.box.startTask({ tools: ["example.spend"] });
          const id = await asked(pb, task, { cents: 5, payee: `bakery${HIDDEN_TEXT}` }, "k1");
          const page = await signedIn(browser, pb);
          const shown = await page.locator(`#approval-${id} .arguments`).innerText();
          assertEquals(shown, String.raw`{"cents":5,"payee":"bakery${HIDDEN_SHOWN}"}`);
          assertNoHidden(await page.locator("main").innerText());
          await page.context().close();
          await pb.box.admin("POST", `/tasks/${task.id}/stop`);
        },
      );

      await t.step(
        "right-to-left letters in a payee are laid out in the order they are stored",
        async () => {
          const task = await pb.box.startTask({ tools: ["example.spend"] });
          const payee = "to \u05e9\u05dc\u05d5\u05dd 12 ab";
          const id = await asked(pb, task, { cents: 5, payee }, "k1");
          const page = await signedIn(browser, pb);
          const shown = await edges(page, `#approval-${id} .arguments code`);
          assertEquals(
            shown.map((entry) => entry.char).join(""),
            '{"cents":5,"payee":"toשלום12ab"}',
          );
          for (let i = 1; i < shown.length; i++) {
            assert(
              shown[i].left > shown[i - 1].left,
              `${shown[i].char} is drawn left of ${shown[i - 1].char}: ${JSON.stringify(shown)}`,
            );
          }
          await page.context().close();
          await pb.box.admin("POST", `/tasks/${task.id}/stop`);
        },
      );

      await t.step(
        "one task's many approvals do not bury another's: each task's oldest 3, a note of the rest, the task's own page, and the note kept live",
        async () => {
          const many = await pb.box.startTask({ tools: ["example.spend"] });
          const ids: number[] = [];
          for (let i = 0; i < 8; i++) ids.push(await asked(pb, many, { cents: i + 1 }, `k${i}`));
          const other = await pb.box.startTask({ tools: ["example.spend"] });
          const otherId = await asked(pb, other, { cents: 99, payee: "the other task" }, "k1");
          const page = await signedIn(browser, pb);
          const cards = page.locator("article[data-approval]");
          assertEquals(await cards.count(), 4);
          assertEquals(
            await cards.evaluateAll((list) =>
              list.map((card) => card.getAttribute("data-approval"))
            ),
            [...ids.slice(0, 3), otherId].map(String),
          );
          assertStringIncludes(
            await page.locator(`#approval-${otherId}`).innerText(),
            "the other task",
          );
          assertStringIncludes(
            await page.locator("#pending-heading").innerText(),
            "9 waiting for your answer",
          );
          const note = page.locator("p.more");
          assertEquals(
            await note.innerText(),
            `5 more from task ${many.id}: all of them, oldest first`,
          );

          // Live: one more from the same task changes the note, and no card is added.
          await page.evaluate("window.sameDocument = true");
          await asked(pb, many, { cents: 50 }, "k8");
          await page.locator("p.more", { hasText: "6 more from task" }).waitFor();
          assertEquals(await cards.count(), 4);
          assertEquals(await page.evaluate("window.sameDocument"), true, "the page was reloaded");

          await note.getByRole("link").click();
          await page.waitForURL(`${pb.origin}/approvals?task=${many.id}`);
          assertEquals(await cards.count(), 9);
          assertEquals(await page.locator(`#approval-${otherId}`).count(), 0);
          await page.context().close();
          await pb.box.admin("POST", `/tasks/${many.id}/stop`);
          await pb.box.admin("POST", `/tasks/${other.id}/stop`);
        },
      );
    } finally {
      await pb.close();
      await browser.close();
    }
  },
});
