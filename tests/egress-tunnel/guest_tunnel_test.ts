/**
 * The laptop egress tunnel end to end, as a user runs it: `gurt guest --desktop` with
 * BOX_EGRESS_TUNNEL=1 (Xvfb and Debian's Chromium, driven over DevTools), and `gurt egress-tunnel`
 * as another process with its own allow list. The page's server listens where the guest's
 * Chromium is sent only through the proxy (`--proxy-bypass-list=<-loopback>`), so what it serves
 * reaches Chromium only through the laptop client: detached, the same load is the proxy's 503.
 */
import { chromium } from "playwright-core";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { guestArgs, gurtArgs, waitFor } from "../kit/mod.ts";
import { freeDisplay, freePort, hasXvfb } from "../cua/fixture.ts";

const TOKEN = "egress-e2e-host-token";
const EGRESS_TOKEN = "egress-e2e-tunnel-token";
const SECRET_PAGE = "served only on the laptop's side";

/** A child's output lines, read as they come. */
class Lines {
  text = "";
  constructor(stream: ReadableStream<Uint8Array>) {
    (async () => {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) this.text += chunk;
    })().catch(() => {});
  }
}

function startClient(ws: string, tokenFile: string, extra: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["egress-tunnel", "--ws", ws, "--token-file", tokenFile, ...extra]),
    stdout: "null",
    stderr: "piped",
  }).spawn();
  return { child, lines: new Lines(child.stderr) };
}

async function stopGently(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // gone
    }
  }, 15_000);
  await child.status;
  clearTimeout(timer);
}

Deno.test({
  name:
    "the guest's Chromium reaches a page only through the attached laptop client, gets 503 without it, and no other guest process may use the proxy",
  ignore: !hasXvfb(),
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const workspace = await Deno.makeTempDir({ prefix: "gurt-eg-" });
    const home = await Deno.makeTempDir({ prefix: "gurt-eg-home-" });
    const tokenFile = `${home}/egress.token`;
    await Deno.writeTextFile(tokenFile, `${EGRESS_TOKEN}\n`);
    let hits = 0;
    const web = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
      // Chromium asks for /favicon.ico too; the page is what is counted.
      if (new URL(request.url).pathname !== "/page") return new Response("", { status: 404 });
      hits++;
      return new Response(`<html><body>${SECRET_PAGE}</body></html>`, {
        headers: { "content-type": "text/html" },
      });
    });
    const pageUrl = `http://127.0.0.1:${web.addr.port}/page`;
    const wsPort = freePort();
    const proxyPort = freePort();
    const guest = new Deno.Command(Deno.execPath(), {
      args: gurtArgs(["guest", ...guestArgs(workspace, ["--desktop"])]),
      env: {
        BOX_TOKEN: TOKEN,
        BOX_DISPLAY: freeDisplay(),
        HOME: home,
        BOX_EGRESS_TUNNEL: "1",
        BOX_EGRESS_TOKEN: EGRESS_TOKEN,
        BOX_EGRESS_WS: `127.0.0.1:${wsPort}`,
        BOX_EGRESS_PROXY: `127.0.0.1:${proxyPort}`,
      },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const out = new Lines(guest.stdout);
    const err = new Lines(guest.stderr);
    const clients: Deno.ChildProcess[] = [];
    let browser;
    try {
      const line = JSON.parse(
        await waitFor(() => out.text.includes("\n") && out.text.split("\n")[0], {
          ms: 60_000,
          what: "the guest's listening line",
          seen: () => err.text,
        }),
      );
      const auth = { authorization: `Bearer ${TOKEN}` };
      const egress = async () =>
        await (await fetch(`${line.host}/v1/egress`, { headers: auth })).json();
      assertEquals(await egress(), {
        enabled: true,
        ready: false,
        client_attached: false,
        protocol: "box-egress-v1",
        ws: `127.0.0.1:${wsPort}`,
        proxy: `127.0.0.1:${proxyPort}`,
      });
      // An exec never sees the tunnel's token (the guest wipes it with its other secrets).
      const exec = await fetch(`${line.exec}/v1/exec`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ command: "env; cat /proc/$PPID/environ" }),
      });
      const ran = await exec.json();
      assert(ran.stdout.includes("HOME="), "the exec ran");
      assert(!ran.stdout.includes(EGRESS_TOKEN), "an exec saw BOX_EGRESS_TOKEN");
      browser = await chromium.connectOverCDP("http://127.0.0.1:9222");
      const page = browser.contexts()[0].pages()[0] ?? await browser.contexts()[0].newPage();

      // Detached: the proxy's 503 page, and the server saw nothing.
      const detached = await page.goto(pageUrl);
      assertEquals(detached?.status(), 503);
      assertStringIncludes(
        await page.innerText("body"),
        "the laptop egress tunnel is not attached",
      );
      assertEquals(hits, 0);

      // Attached: the page comes through the laptop client, which says so in one line.
      const one = startClient(`ws://127.0.0.1:${wsPort}/`, tokenFile, ["--allow", "127.0.0.1"]);
      clients.push(one.child);
      await waitFor(async () => (await egress()).client_attached, { ms: 30_000, what: "attach" });
      const info = await (await fetch(`${line.host}/v1/info`, { headers: auth })).json();
      assertEquals(info.capabilities.egress_tunnel, { enabled: true, ready: true });
      const attached = await page.goto(pageUrl);
      assertEquals(attached?.status(), 200);
      assertEquals(await page.innerText("body"), SECRET_PAGE);
      assertEquals(hits, 1);
      await waitFor(() => one.lines.text.includes(`127.0.0.1:${web.addr.port} (127.0.0.1) sent`), {
        what: "the client's line for the connection",
        seen: () => one.lines.text,
      });

      // Another process of the guest (this test runs as the guest's user) is refused.
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: proxyPort });
      await conn.write(
        new TextEncoder().encode(`CONNECT 127.0.0.1:${web.addr.port} HTTP/1.1\r\n\r\n`),
      );
      const buffer = new Uint8Array(4096);
      const count = await conn.read(buffer);
      conn.close();
      const refused = new TextDecoder().decode(buffer.subarray(0, count ?? 0));
      assertStringIncludes(refused, "403");
      assertStringIncludes(refused, "does not come from the guest's Chromium");
      assertEquals(hits, 1);

      // A second client with the same token replaces the first, and both say so; its default
      // allow list (public hosts only) refuses the laptop's loopback.
      const two = startClient(`ws://127.0.0.1:${wsPort}/`, tokenFile, []);
      clients.push(two.child);
      await waitFor(() => two.lines.text.includes("replacing an earlier client"), {
        ms: 30_000,
        what: "the second client's attach",
        seen: () => two.lines.text,
      });
      await waitFor(() => one.lines.text.includes("replaced by a newer client"), {
        what: "the first client told it was replaced",
        seen: () => one.lines.text,
      });
      const private_ = await page.goto(pageUrl);
      assertEquals(private_?.status(), 403);
      assertStringIncludes(await page.innerText("body"), "private or loopback address");
      assertEquals(hits, 1);

      // Detach every client: ready and client_attached follow, and the page is 503 again.
      for (const child of clients) child.kill("SIGTERM");
      for (const child of clients) await child.status;
      clients.length = 0;
      await waitFor(async () => !(await egress()).client_attached, { what: "detach" });
      assertEquals((await egress()).ready, false);
      const again = await page.goto(pageUrl);
      assertEquals(again?.status(), 503);
      assertEquals(hits, 1);
      await (await fetch(`${line.host}/v1/shutdown`, { method: "POST", headers: auth })).body
        ?.cancel();
      assertEquals((await guest.status).code, 0);
      assert(!err.text.includes(EGRESS_TOKEN), "the tunnel's token reached the guest's log");
    } finally {
      await browser?.close().catch(() => {});
      for (const child of clients) {
        child.kill("SIGKILL");
        await child.status;
      }
      // SIGTERM first: the guest stops its desktop (Chromium, Xvfb), which SIGKILL would leave.
      await stopGently(guest);
      await web.shutdown();
      await Deno.remove(workspace, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});
