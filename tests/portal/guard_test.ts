/** The portal's doors over real HTTP: sign-in, sessions, cross-site refusals, headers, the token. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { ensureOwnerToken, loginLink, startPortal } from "../../mod/portal/mod.ts";
import { grant, pendingApproval, withHome } from "../kit/mod.ts";
import { startPortalBox } from "./helpers.ts";

const ASK_ECHO = { echo: grant({ tool: "example.echo", mode: "ask" }) };

async function post(
  url: string,
  init: { headers?: Record<string, string>; form?: Record<string, string> },
): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers: init.headers,
    body: new URLSearchParams(init.form ?? {}),
    redirect: "manual",
  });
  return { status: response.status, text: await response.text() };
}

Deno.test("approve is refused without a session, with a forged Origin, cross-site, or without the form token", async () => {
  const pb = await startPortalBox({ grants: ASK_ECHO });
  try {
    const task = await pb.box.startTask();
    const call = task.call("example.echo", { text: "hi" }, "k1");
    const id = await pendingApproval(pb.box, task);
    const { cookie, csrf } = await pb.signIn();
    const url = `${pb.origin}/approvals/${id}/approve`;
    const same = { origin: pb.origin, "sec-fetch-site": "same-origin" };

    const noSession = await post(url, { headers: same, form: { csrf } });
    assertEquals(noSession.status, 401);
    assertStringIncludes(noSession.text, "runbook.md#portal-login-refused");

    const forged = await post(url, {
      headers: { cookie, origin: "http://evil.example", "sec-fetch-site": "same-origin" },
      form: { csrf },
    });
    assertEquals(forged.status, 403);
    assertStringIncludes(forged.text, "runbook.md#portal-request-refused");

    const crossSite = await post(url, {
      headers: { cookie, origin: pb.origin, "sec-fetch-site": "cross-site" },
      form: { csrf },
    });
    assertEquals(crossSite.status, 403);

    const noOrigin = await post(url, { headers: { cookie }, form: { csrf } });
    assertEquals(noOrigin.status, 403);

    const noToken = await post(url, { headers: { cookie, ...same } });
    assertEquals(noToken.status, 403);
    const wrongToken = await post(url, {
      headers: { cookie, ...same },
      form: { csrf: "x" + csrf },
    });
    assertEquals(wrongToken.status, 403);

    const items = (await pb.box.admin("GET", "/approvals")).body.items;
    assertEquals(items.map((item: { approval: number }) => item.approval), [id]);
    assertEquals((await pb.box.records()).filter((r) => r.event.type === "approval").length, 0);

    const ok = await post(url, { headers: { cookie, ...same }, form: { csrf } });
    assertEquals(ok.status, 303);
    assertEquals((await call).ok, true);
    const approval = (await pb.box.records()).find((r) => r.event.type === "approval");
    assertEquals(approval.event.by, "the owner, in the portal");
  } finally {
    await pb.close();
  }
});

Deno.test("a sign-in link works once, and a link made with another token never", async () => {
  const pb = await startPortalBox();
  try {
    const link = await pb.link();
    const code = new URL(link).searchParams.get("code")!;
    const headers = { origin: pb.origin, "sec-fetch-site": "same-origin" };
    const first = await post(`${pb.origin}/login`, { headers, form: { code } });
    assertEquals(first.status, 303);
    const again = await post(`${pb.origin}/login`, { headers, form: { code } });
    assertEquals(again.status, 401);
    assertStringIncludes(again.text, "already used");
    const other = await Deno.makeTempDir();
    try {
      await ensureOwnerToken(other);
      await Deno.mkdir(`${other}/run`);
      await Deno.writeTextFile(`${other}/run/portal.addr`, pb.portal.addr);
      const foreign = new URL(await loginLink(other, new Date())).searchParams.get("code")!;
      const refused = await post(`${pb.origin}/login`, { headers, form: { code: foreign } });
      assertEquals(refused.status, 401);
      assertStringIncludes(refused.text, "not one gurt portal made");
    } finally {
      await Deno.remove(other, { recursive: true });
    }
    const crossSiteLogin = await post(`${pb.origin}/login`, {
      headers: { origin: "http://evil.example" },
      form: { code: new URL(await pb.link()).searchParams.get("code")! },
    });
    assertEquals(crossSiteLogin.status, 403);
  } finally {
    await pb.close();
  }
});

Deno.test("pages redirect to sign-in without a session; the API wants a session or the owner token", async () => {
  const pb = await startPortalBox();
  try {
    for (
      const path of ["/approvals", "/tasks", "/apps", "/apps/notes", "/keys", "/grants", "/audit"]
    ) {
      const response = await fetch(`${pb.origin}${path}`, { redirect: "manual" });
      await response.body?.cancel();
      assertEquals([response.status, response.headers.get("location")], [303, "/login"], path);
    }
    const bare = await fetch(`${pb.origin}/api/approvals`);
    assertEquals(bare.status, 401);
    await bare.body?.cancel();
    const token = (await Deno.readTextFile(`${pb.box.home}/portal/owner.token`)).trim();
    const wrong = await fetch(`${pb.origin}/api/approvals`, {
      headers: { authorization: `Bearer ${"0".repeat(64)}` },
    });
    assertEquals(wrong.status, 401);
    await wrong.body?.cancel();
    const api = await fetch(`${pb.origin}/api/approvals`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assertEquals([api.status, await api.json()], [200, { items: [] }]);
    const started = await fetch(`${pb.origin}/api/tasks`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ worker: { kind: "none" } }),
    });
    assertEquals(started.status, 200);
    const id = (await started.json()).task.id;
    const { cookie } = await pb.signIn();
    const viaSession = await fetch(`${pb.origin}/api/tasks/${id}/stop`, {
      method: "POST",
      headers: { cookie, origin: pb.origin, "sec-fetch-site": "same-origin" },
    });
    assertEquals(viaSession.status, 403, "a session's API call without the CSRF header");
    await viaSession.body?.cancel();
  } finally {
    await pb.close();
  }
});

Deno.test("the session cookie is HttpOnly and SameSite=Strict; every page has a CSP with no inline script", async () => {
  const pb = await startPortalBox();
  try {
    const code = new URL(await pb.link()).searchParams.get("code")!;
    const response = await fetch(`${pb.origin}/login`, {
      method: "POST",
      headers: { origin: pb.origin },
      body: new URLSearchParams({ code }),
      redirect: "manual",
    });
    await response.body?.cancel();
    const cookie = response.headers.get("set-cookie") ?? "";
    assertStringIncludes(cookie, "HttpOnly");
    assertStringIncludes(cookie, "SameSite=Strict");
    const page = await fetch(`${pb.origin}/login`);
    const csp = page.headers.get("content-security-policy") ?? "";
    assertStringIncludes(csp, "script-src 'self'");
    assertStringIncludes(csp, "default-src 'none'");
    assertStringIncludes(csp, "frame-ancestors 'none'");
    assert(!csp.includes("unsafe-inline"), csp);
    assertEquals(page.headers.get("referrer-policy"), "same-origin");
    const html = await page.text();
    assert(!/<script(?![^>]*\bsrc=)/.test(html), "a page holds an inline script");
  } finally {
    await pb.close();
  }
});

Deno.test("a request under another Host name (DNS rebinding) is refused", async () => {
  const pb = await startPortalBox();
  try {
    const port = Number(pb.portal.addr.split(":").at(-1));
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(
      new TextEncoder().encode(
        `GET /login HTTP/1.1\r\nHost: attacker.example:${port}\r\nConnection: close\r\n\r\n`,
      ),
    );
    const text = new TextDecoder().decode(
      (await new Response(conn.readable).arrayBuffer()) as ArrayBuffer,
    );
    assertStringIncludes(text.split("\r\n")[0], "421");
  } finally {
    await pb.close();
  }
});

Deno.test("the owner token is written 0600 once, and refused when others can read it", async () => {
  await withHome(async (home) => {
    const token = await ensureOwnerToken(home);
    assertEquals((await Deno.stat(`${home}/portal/owner.token`)).mode! & 0o777, 0o600);
    assertEquals(await ensureOwnerToken(home), token);
    await Deno.chmod(`${home}/portal/owner.token`, 0o644);
    let message = "";
    try {
      await ensureOwnerToken(home);
    } catch (error) {
      message = (error as Error).message;
    }
    assertStringIncludes(message, "see runbook.md#portal-token-exposed");
  });
});

Deno.test("approving an approval that is gone shows the core's sentence, status 404", async () => {
  const pb = await startPortalBox();
  try {
    const { cookie, csrf } = await pb.signIn();
    const gone = await post(`${pb.origin}/approvals/999/approve`, {
      headers: { cookie, origin: pb.origin },
      form: { csrf },
    });
    assertEquals(gone.status, 404);
    assertStringIncludes(
      gone.text,
      "999: no such approval (already answered or expired, or dropped when gurt serve stopped: approvals wait only while it runs)",
    );
  } finally {
    await pb.close();
  }
});

Deno.test("a portal on a port already taken fails with the runbook pointer and keeps the token", async () => {
  const pb = await startPortalBox();
  try {
    const token = await Deno.readTextFile(`${pb.box.home}/portal/owner.token`);
    let message = "";
    try {
      const second = await startPortal({
        listen: pb.portal.addr,
        socket: `${pb.box.home}/run/owner-broker/admin.sock`,
        token: token.trim(),
      });
      await second.close();
    } catch (error) {
      message = (error as Error).message;
    }
    assertStringIncludes(message, `the portal cannot listen on ${pb.portal.addr}`);
    assertStringIncludes(message, "see runbook.md#portal-listen-failed");
    assertEquals(await Deno.readTextFile(`${pb.box.home}/portal/owner.token`), token);
  } finally {
    await pb.close();
  }
});

Deno.test("the owner token pasted in the sign-in form signs in; signing out ends the session", async () => {
  const pb = await startPortalBox();
  try {
    const headers = { origin: pb.origin };
    const wrong = await post(`${pb.origin}/login`, { headers, form: { token: "f".repeat(64) } });
    assertEquals(wrong.status, 401);
    assertStringIncludes(wrong.text, "the owner token is wrong");
    const token = (await Deno.readTextFile(`${pb.box.home}/portal/owner.token`)).trim();
    const response = await fetch(`${pb.origin}/login`, {
      method: "POST",
      headers,
      body: new URLSearchParams({ token }),
      redirect: "manual",
    });
    await response.body?.cancel();
    assertEquals(response.status, 303);
    const cookie = /gurt_session=[^;]+/.exec(response.headers.get("set-cookie") ?? "")![0];
    const page = await fetch(`${pb.origin}/approvals`, { headers: { cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
    const out = await post(`${pb.origin}/logout`, {
      headers: { cookie, ...headers },
      form: { csrf },
    });
    assertEquals(out.status, 303);
    const after = await fetch(`${pb.origin}/approvals`, {
      headers: { cookie },
      redirect: "manual",
    });
    await after.body?.cancel();
    assertEquals([after.status, after.headers.get("location")], [303, "/login"]);
  } finally {
    await pb.close();
  }
});
