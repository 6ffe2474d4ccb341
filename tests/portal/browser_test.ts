/**
 * The portal in a real browser (Debian's Chromium through playwright-core) against a real core:
 * approve and refuse a waiting call, live updates, inert arguments, a cross-site replay, keys, and
 * screenshots of every page at desktop and phone widths under tests/artifacts/portal/.
 */
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { grant, pendingApproval, type TestBox, type TestTask, until } from "../kit/mod.ts";
import { type PortalBox, startPortalBox } from "./helpers.ts";

/** Waits (up to 30 s, for a loaded machine) until the task has a pending approval; its id. */
const waitPending = (box: TestBox, task: TestTask) => pendingApproval(box, task, 30_000);

const ARTIFACTS = new URL("../artifacts/portal", import.meta.url).pathname;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const ASK = {
  echo: grant({ tool: "example.echo", mode: "ask" }),
  spend: grant({ tool: "example.spend", mode: "ask" }),
};

async function signedIn(browser: Browser, pb: PortalBox): Promise<[BrowserContext, Page]> {
  const context = await browser.newContext({ viewport: DESKTOP });
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  await page.goto(await pb.link());
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${pb.origin}/approvals`);
  return [context, page];
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

Deno.test({
  name: "the portal in Chromium",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    const pb = await startPortalBox({ grants: ASK, vault: true });
    try {
      await t.step(
        "the owner signs in, sees the waiting call, approves it, and the call returns its result",
        async () => {
          const task = await pb.box.startTask({ tools: ["example.spend"] });
          const call = task.call("example.spend", { cents: 7, payee: "the bakery" }, "k1");
          const id = await waitPending(pb.box, task);
          const [context, page] = await signedIn(browser, pb);
          const card = page.locator(`#approval-${id}`);
          assertStringIncludes(await card.innerText(), "example.spend");
          assertStringIncludes(await card.innerText(), "the bakery");
          assertStringIncludes(await card.innerText(), task.id);
          await shoot(page, "approvals");
          await card.getByRole("button", { name: "Approve" }).click();
          await page.waitForURL(/answered=/);
          assertStringIncludes(await page.getByRole("status").first().innerText(), "allowed");
          const result = await call;
          assertEquals([result.ok, result.output.paid], [true, 7]);
          await context.close();
        },
      );

      await t.step(
        "the owner refuses with a reason; the call is denied and the reason recorded",
        async () => {
          const task = await pb.box.startTask({ tools: ["example.spend"] });
          const call = task.call("example.spend", { cents: 900 }, "k1");
          const id = await waitPending(pb.box, task);
          const [context, page] = await signedIn(browser, pb);
          const card = page.locator(`#approval-${id}`);
          await card.getByLabel("Reason (optional)").fill("too dear");
          await card.getByRole("button", { name: "Refuse" }).click();
          await page.waitForURL(/answered=/);
          assertEquals(await call, { ok: false, error: "Denied: the owner refused this call." });
          const approval = (await pb.box.records()).find((r) =>
            r.event.type === "approval" && r.event.decision === id
          );
          assertEquals([approval.event.answer, approval.event.reason], ["refused", "too dear"]);
          await context.close();
        },
      );

      await t.step(
        "approvals come and go on an open page without a reload, leaving a half-typed reason alone",
        async () => {
          const first = await pb.box.startTask({ tools: ["example.echo"] });
          const firstCall = first.call("example.echo", { text: "first" }, "k1");
          const firstId = await waitPending(pb.box, first);
          const [context, page] = await signedIn(browser, pb);
          const firstCard = page.locator(`#approval-${firstId}`);
          await firstCard.getByLabel("Reason (optional)").fill("half-typed");
          await page.evaluate("window.sameDocument = true");
          const task = await pb.box.startTask({ tools: ["example.echo"] });
          const call = task.call("example.echo", { text: "live" }, "k1");
          const id = await waitPending(pb.box, task);
          await page.locator(`#approval-${id}`).waitFor();
          assertEquals(await firstCard.getByLabel("Reason (optional)").inputValue(), "half-typed");
          await pb.box.admin("POST", `/approvals/${firstId}/refuse`);
          await firstCard.waitFor({ state: "detached" });
          assertEquals((await firstCall).ok, false);
          assertEquals(await page.evaluate("window.sameDocument"), true, "the page was reloaded");
          await page.locator(`#approval-${id}`).getByRole("button", { name: "Approve" }).click();
          assertEquals((await call).output, { text: "live" });
          await context.close();
        },
      );

      await t.step(
        "an argument holding <script> and direction-changing characters is shown inert and escaped",
        async () => {
          const evil =
            '</code></pre><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">' +
            "\u202egnp.exe\u2066x\u0007";
          const task = await pb.box.startTask({ tools: ["example.echo"] });
          const call = task.call("example.echo", { text: evil }, "k1");
          const id = await waitPending(pb.box, task);
          const [context, page] = await signedIn(browser, pb);
          const shown = await page.locator(`#approval-${id} .arguments`).innerText();
          assertStringIncludes(shown, "<script>window.pwned = 1</script>");
          assertStringIncludes(shown, "\\u202egnp.exe\\u2066x\\u0007");
          assertNotIncludes(shown, "\u202e");
          assertEquals(await page.evaluate<number | null>("window.pwned ?? null"), null);
          assertEquals(
            await page.locator(`#approval-${id} script, #approval-${id} img`).count(),
            0,
          );
          await shoot(page, "approvals-escaped");
          await page.locator(`#approval-${id}`).getByRole("button", { name: "Refuse" }).click();
          await page.waitForURL(/answered=/);
          assertEquals((await call).ok, false);
          await context.close();
        },
      );

      await t.step(
        "a form replayed from another site with the stolen form token is refused",
        async () => {
          const task = await pb.box.startTask({ tools: ["example.echo"] });
          const call = task.call("example.echo", { text: "replayed" }, "k1");
          const id = await waitPending(pb.box, task);
          const [context, page] = await signedIn(browser, pb);
          const csrf = await page.locator('input[name="csrf"]').first().inputValue();
          const attacker = Deno.serve(
            { hostname: "127.0.0.1", port: 0, onListen: () => {} },
            () =>
              new Response(
                `<form method="post" action="${pb.origin}/approvals/${id}/approve">` +
                  `<input type="hidden" name="csrf" value="${csrf}"><button>Win a prize</button></form>`,
                { headers: { "content-type": "text/html" } },
              ),
          );
          try {
            const evil = await context.newPage();
            await evil.goto(`http://127.0.0.1:${attacker.addr.port}/`);
            const [response] = await Promise.all([
              evil.waitForResponse((r) => r.url().includes("/approve")),
              evil.getByRole("button", { name: "Win a prize" }).click(),
            ]);
            assertEquals(response.status(), 403);
            assertStringIncludes(await evil.locator("main").innerText(), "portal-request-refused");
            await shoot(evil, "refused");
          } finally {
            await attacker.shutdown();
          }
          const still = (await pb.box.admin("GET", "/approvals")).body.items;
          assert(
            still.some((item: { approval: number }) => item.approval === id),
            "it was answered",
          );
          await page.reload();
          await page.locator(`#approval-${id}`).getByRole("button", { name: "Refuse" }).click();
          await page.waitForURL(/answered=/);
          assertEquals((await call).ok, false);
          await context.close();
        },
      );

      await t.step(
        "a key set on the Keys page is in the vault file and in no page, response or log after",
        async () => {
          const secret = `portal-secret-${crypto.randomUUID()}`;
          const [context, page] = await signedIn(browser, pb);
          const seen: string[] = [];
          page.on("response", async (response) => {
            seen.push(await response.text().catch(() => ""));
          });
          await page.goto(`${pb.origin}/keys`);
          await page.getByLabel("Name").fill("NOTES_TOKEN");
          await page.getByLabel(/^Value/).fill(secret);
          await page.getByRole("button", { name: "Set the key" }).click();
          await page.waitForURL(/done=set/);
          assertStringIncludes(await page.locator("main").innerText(), "NOTES_TOKEN");
          assertStringIncludes(await Deno.readTextFile(`${pb.box.home}/vault.env`), secret);
          await page.getByLabel("App").fill("notes");
          await page.getByRole("button", { name: "Turn off for this app" }).click();
          await page.waitForURL(/done=deny/);
          assertStringIncludes(await page.locator("main").innerText(), "Turned off for: notes");
          await page.getByLabel("Name").fill("ANTHROPIC");
          await page.getByLabel(/^Value/).fill("sk-ant-api03-refused");
          await page.getByRole("button", { name: "Set the key" }).click();
          assertStringIncludes(
            await page.getByRole("alert").innerText(),
            "an Anthropic API key cannot be kept in the vault",
          );
          await shoot(page, "keys");
          for (const path of ["/approvals", "/tasks", "/keys", "/grants", "/audit"]) {
            await page.goto(`${pb.origin}${path}`);
            assertNotIncludes(await page.content(), secret, path);
          }
          await until(() => seen.length >= 8);
          for (const text of seen) assertNotIncludes(text, secret);
          for (const line of pb.box.logs) assertNotIncludes(line, secret);
          for (const record of await pb.box.records()) {
            assertNotIncludes(JSON.stringify(record), secret);
          }
          await context.close();
        },
      );

      await t.step(
        "tasks: start one from the page, read its journal and audit records, stop it",
        async () => {
          const [context, page] = await signedIn(browser, pb);
          await page.goto(`${pb.origin}/tasks`);
          await page.getByLabel("Prompt").fill("Tidy the notes <b>now</b>");
          await page.getByLabel(/^Budget/).fill("50");
          await page.getByRole("button", { name: "Start the task" }).click();
          await page.waitForURL(/started=/);
          const id = new URL(page.url()).searchParams.get("started")!;
          await shoot(page, "tasks");
          await page.getByRole("link", { name: id }).click();
          await page.waitForURL(`${pb.origin}/tasks/${id}`);
          assertStringIncludes(await page.locator("main").innerText(), "Tidy the notes <b>now</b>");
          assertStringIncludes(await page.locator("main").innerText(), "task_started");
          await shoot(page, "task");
          await page.getByRole("button", { name: "Stop the task" }).click();
          await page.waitForURL(/stopped=1/);
          assertStringIncludes(await page.locator("main").innerText(), "stopped");
          await context.close();
        },
      );

      await t.step("grants, audit and sign-in pages render and read on a phone", async () => {
        await pb.box.writeGrant("broken", 'tool = "example.echo"\nmode = "sometimes"\n');
        const [context, page] = await signedIn(browser, pb);
        await page.goto(`${pb.origin}/grants`);
        const grants = await page.locator("main").innerText();
        assertStringIncludes(grants, "runbook.md#grants-invalid");
        assertStringIncludes(grants, "broken.toml");
        assertStringIncludes(grants, "ask");
        await shoot(page, "grants");
        await pb.box.removeGrant("broken");
        await page.goto(`${pb.origin}/audit`);
        const checkpoint = await page.locator("#checkpoint").inputValue();
        assert(/^\d+ \d{4}-\d{2}-\d{2}\.jsonl [0-9a-f]{64}$/.test(checkpoint), checkpoint);
        await shoot(page, "audit");
        const fresh = await browser.newContext({ viewport: DESKTOP });
        const login = await fresh.newPage();
        await login.goto(`${pb.origin}/approvals`);
        await login.waitForURL(`${pb.origin}/login`);
        await shoot(login, "login");
        await fresh.close();
        await context.close();
      });
    } finally {
      await pb.close();
      await browser.close();
    }
  },
});

Deno.test({
  name: "the Keys page says the vault is not available when the core has no vault routes",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const pb = await startPortalBox();
    try {
      const { cookie, csrf } = await pb.signIn();
      const page = await fetch(`${pb.origin}/keys`, { headers: { cookie } });
      assertStringIncludes(await page.text(), "The vault is not available");
      const set = await fetch(`${pb.origin}/keys`, {
        method: "POST",
        headers: { cookie, origin: pb.origin },
        body: new URLSearchParams({ csrf, name: "A_KEY", value: "never-kept" }),
      });
      assertEquals(set.status, 503);
      const text = await set.text();
      assertStringIncludes(text, "runbook.md#portal-vault-unavailable");
      assertNotIncludes(text, "never-kept");
    } finally {
      await pb.close();
    }
  },
});
