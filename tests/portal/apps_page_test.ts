/**
 * The portal's Apps page and an app's page (issue 29) against a real `gurt serve` with a real app:
 * a small node MCP server installed from a folder. The pages show its facts as the core's
 * GET /apps/:name gives them; the text its server supplied (a tool description holding `<script>`,
 * forged lines and hidden characters, a left-out tool's name, its last words on stderr) is shown as
 * data; a key's switch turns it off for the app (the vault's deny list) and on; the app is turned
 * off and on; removing it asks first.
 */
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { HIDDEN, HIDDEN_SHOWN, until } from "../kit/mod.ts";
import { addProbe, DESCRIPTION_SHOWN, startAppPortal } from "./app_portal_kit.ts";

/** The text of the element with `class` (its first), entities undone; tags inside it dropped. */
function textOf(html: string, klass: string): string {
  const match = new RegExp(`class="${klass}"[^>]*>([\\s\\S]*?)</(dd|p|td|span|li)>`).exec(html);
  assert(match !== null, `no element of class ${klass}`);
  return match[1].replace(/<[^>]*>/g, "").replaceAll("&lt;", "<").replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&amp;", "&");
}

function assertNoHidden(html: string): void {
  for (const char of HIDDEN) {
    assert(!html.includes(char), `a raw U+${char.codePointAt(0)!.toString(16)} is on the page`);
  }
}

Deno.test({
  name: "the Apps pages show an installed app's facts, its server's text as data, and its switches",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const ap = await startAppPortal();
    try {
      await addProbe(ap);
      const { cookie, csrf } = await ap.signIn();
      const get = async (path: string) => {
        const response = await fetch(`${ap.origin}${path}`, { headers: { cookie } });
        return { status: response.status, html: await response.text() };
      };
      const post = async (path: string, fields: Record<string, string> = { csrf }) => {
        const response = await fetch(`${ap.origin}${path}`, {
          method: "POST",
          headers: { cookie, origin: ap.origin, "sec-fetch-site": "same-origin" },
          body: new URLSearchParams(fields),
          redirect: "manual",
        });
        await response.body?.cancel();
        return { status: response.status, location: response.headers.get("location") };
      };
      const detail = async () => (await ap.box.admin("GET", "/apps/probe")).body.app;

      await t.step("the list: name, kind, enabled, state, tools, last error", async () => {
        const { status, html } = await get("/apps");
        assertEquals(status, 200);
        assertStringIncludes(html, '<a href="/apps" aria-current="page">Apps</a>');
        const row = /<tbody><tr>([\s\S]*?)<\/tr>/.exec(html)?.[1] ?? "";
        const cells = [...row.matchAll(/<td data-label="([^"]+)">([\s\S]*?)<\/td>/g)]
          .map((m) => [m[1], m[2].replace(/<[^>]*>/g, "")]);
        assertEquals(Object.fromEntries(cells), {
          App: "probe",
          Kind: "mcp",
          Enabled: "on",
          State: (await detail()).state,
          Tools: "4",
          "Last error": "none",
        });
      });

      await t.step(
        "an app's page: description, hosts, keys, tools with cost and read-only, left-out tools",
        async () => {
          const { status, html } = await get("/apps/probe");
          assertEquals(status, 200);
          assertEquals(textOf(html, "description"), "The portal's probe <i>app</i>");
          assertEquals(textOf(html, "hosts"), "api.example.com");
          assertEquals(textOf(html, "enabled"), "on");
          const keys = [
            ...html.matchAll(
              /<code>([A-Z_]+)<\/code><\/td><td[^>]*>([^<]*)<\/td><td[^>]*><span class="key-state[^"]*">([^<]*)</g,
            ),
          ]
            .map((m) => [m[1], m[2], m[3]]);
          assertEquals(keys, [
            ["PROBE_TOKEN", "environment variable PROBE_TOKEN", "set"],
            [
              "MISSING_TOKEN",
              "environment variable MISSING_TOKEN",
              "missing (set it on Accounts &amp; Keys)",
            ],
          ]);
          const tools = [
            ...html.matchAll(
              /<li class="card tool"><h3><code>([^<]*)<\/code>[\s\S]*?<dt>Cost<\/dt><dd>([^<]*)<\/dd><dt>Read-only<\/dt><dd>([^<]*)<\/dd>/g,
            ),
          ]
            .map((m) => [m[1], m[2], m[3]]);
          assertEquals(tools.sort(), [
            ["probe.charge", "$0.03 a call", "no"],
            ["probe.crash", "free", "no"],
            ["probe.echo", "free", "yes (its server says so)"],
            ["probe.long", "free", "no"],
          ]);
          assertStringIncludes(html, "&quot;message&quot;: {");
          const left = /<ul class="left-out"><li>([\s\S]*?)<\/li>/.exec(html)?.[1] ?? "";
          assertStringIncludes(
            left,
            "<code>&lt;b&gt;bad&lt;/b&gt; tool</code>: its name makes no box tool name",
          );
        },
      );

      await t.step(
        "a tool description holding <script>, forged lines and hidden characters is shown as one line of text",
        async () => {
          const { html } = await get("/apps/probe");
          assertNotIncludes(html, "<script>window");
          assertNotIncludes(html, "<b>bad");
          assertNotIncludes(html, "<i>app");
          assertNoHidden(html);
          const echo = html.slice(html.indexOf("<code>probe.echo</code>"));
          assertEquals(textOf(echo, "tool-description data"), DESCRIPTION_SHOWN);
          const long = html.slice(html.indexOf("<code>probe.long</code>"));
          assertEquals(
            textOf(long, "tool-description data"),
            `${"long ".repeat(200)}… [2003 more characters]`,
          );
        },
      );

      await t.step(
        "a key's switch turns it off for the app (the vault's deny list) and on again",
        async () => {
          const off = await post("/apps/probe/keys/PROBE_TOKEN/off");
          assertEquals(off, { status: 303, location: "/apps/probe?done=off&key=PROBE_TOKEN" });
          const denied = async () =>
            ((await ap.box.admin("GET", "/api/vault")).body.keys as {
              name: string;
              denied_apps: string[];
            }[])
              .find((key) => key.name === "PROBE_TOKEN")?.denied_apps;
          assertEquals(await denied(), ["probe"]);
          let page = (await get("/apps/probe?done=off&key=PROBE_TOKEN")).html;
          assertStringIncludes(page, "The key PROBE_TOKEN was turned off for this app.");
          assertStringIncludes(page, "off (turned off for this app)");
          assertStringIncludes(
            page,
            'role="switch" aria-checked="false">PROBE_TOKEN: off, turn on',
          );
          assert((await detail()).secrets[0].usable !== null);
          const on = await post("/apps/probe/keys/PROBE_TOKEN/on");
          assertEquals(on, { status: 303, location: "/apps/probe?done=on&key=PROBE_TOKEN" });
          assertEquals(await denied(), []);
          page = (await get("/apps/probe")).html;
          assertStringIncludes(page, 'role="switch" aria-checked="true">PROBE_TOKEN: on, turn off');
          assertEquals((await detail()).secrets[0].usable, null);
        },
      );

      await t.step("a form without the page's token changes nothing", async () => {
        assertEquals((await post("/apps/probe/disable", {})).status, 403);
        assertEquals((await detail()).enabled, true);
      });

      await t.step("disable and enable change the app", async () => {
        assertEquals(await post("/apps/probe/disable"), {
          status: 303,
          location: "/apps/probe?done=disabled",
        });
        assertEquals([(await detail()).enabled, (await detail()).disabled_by], [false, "owner"]);
        let page = (await get("/apps/probe?done=disabled")).html;
        assertEquals(textOf(page, "enabled"), "off: turned off by the owner");
        assertStringIncludes(page, "Turn probe on</button>");
        assertStringIncludes(
          (await get("/apps")).html,
          '<td data-label="Enabled"><span class="bad">off</span>',
        );
        assertEquals(await post("/apps/probe/enable"), {
          status: 303,
          location: "/apps/probe?done=enabled",
        });
        assertEquals((await detail()).enabled, true);
        page = (await get("/apps/probe")).html;
        assertStringIncludes(page, "Turn probe off</button>");
      });

      await t.step("the server's last words on stderr are shown as data", async () => {
        await ap.box.grant({ tool: "probe.crash" });
        const task = await ap.box.task(["probe.crash"]);
        // The server starts only with every key it reads.
        await ap.box.setKey("MISSING_TOKEN", "missing-secret-value-0123456789");
        const called = await ap.box.call(task, "probe.crash", {});
        assertEquals(called.body.ok, false, JSON.stringify(called.body));
        await until(async () => (await detail()).last_error !== null, 30_000);
        const lastError = (await detail()).last_error as string;
        assertStringIncludes(lastError, "<img src=x");
        for (const path of ["/apps", "/apps/probe"]) {
          const { html } = await get(path);
          assertNotIncludes(html, "<img");
          assertNoHidden(html);
          assertStringIncludes(
            html,
            "&lt;img src=x onerror=&quot;window.pwned=2&quot;&gt;\\rState: running",
          );
          assertStringIncludes(html, HIDDEN_SHOWN);
        }
      });

      await t.step("remove asks first, then removes the app", async () => {
        assertEquals(await post("/apps/probe/remove"), {
          status: 303,
          location: "/apps/probe/remove",
        });
        assertEquals((await ap.box.admin("GET", "/apps/probe")).status, 200);
        const ask = (await get("/apps/probe/remove")).html;
        assertStringIncludes(ask, "Remove the app probe?");
        assertStringIncludes(ask, '<input type="hidden" name="confirm" value="yes">');
        assertStringIncludes(ask, "Yes, remove probe</button>");
        const removed = await post("/apps/probe/remove", { csrf, confirm: "yes" });
        assertEquals(removed, { status: 303, location: "/apps?done=removed&app=probe" });
        assertEquals((await ap.box.admin("GET", "/apps")).body.apps, []);
        assertEquals((await ap.box.admin("GET", "/apps/probe")).status, 404);
        const list = (await get("/apps?done=removed&app=probe")).html;
        assertStringIncludes(list, "The app probe was removed.");
        assertStringIncludes(list, "No app is installed.");
        assertEquals((await get("/apps/probe")).status, 404);
      });
    } finally {
      await ap.close();
    }
  },
});
