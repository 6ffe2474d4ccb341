/**
 * The banner every signed-in page shows while the grant files are invalid (runbook.md#grants-invalid):
 * every call of every task is then denied, which the owner must not learn only from a task. It is
 * put at the top of the page's main part, after the page is rendered, so that no page can leave it
 * out; the core's check (GET /grants/check) is asked at each page view.
 */
import type { MiddlewareHandler } from "hono";
import type { AdminClient } from "../admin/mod.ts";
import type { PortalEnv } from "./context.ts";

/** Where the banner goes: the start of every page's main part (layout.tsx). */
const MAIN = '<main id="main" tabindex="-1">';

/** The middleware that adds the banner to signed-in HTML pages. */
export function grantsBanner(admin: AdminClient): MiddlewareHandler<PortalEnv> {
  return async (c, next) => {
    await next();
    if (c.req.method !== "GET" || (c.get("session") ?? null) === null) return;
    if (!(c.res.headers.get("content-type") ?? "").startsWith("text/html")) return;
    const check = await admin.grantsCheck().catch(() => null);
    if (check === null || !check.ok || check.value.problems.length === 0) return;
    const page = await c.res.text();
    const at = page.indexOf(MAIN);
    const banner = bannerHtml(check.value.problems);
    const body = at === -1
      ? page
      : `${page.slice(0, at + MAIN.length)}${banner}${page.slice(at + MAIN.length)}`;
    const headers = new Headers(c.res.headers);
    headers.delete("content-length");
    c.res = new Response(body, { status: c.res.status, headers });
  };
}

/** The banner: how many problems, the first, and where to read them all. */
export function bannerHtml(
  problems: readonly { file: string; line: number | null; problem: string }[],
): string {
  const [first] = problems;
  const where = first.line === null ? first.file : `${first.file}:${first.line}`;
  const more = problems.length === 1 ? "" : ` (and ${problems.length - 1} more)`;
  const said = `${where}: ${first.problem}${more}`;
  const stop = /[.?!]$/.test(said) ? "" : ".";
  return `<div class="error grants-banner" role="alert"><p><strong>The grant files are invalid: ` +
    `every call of every task is denied.</strong> ${escapeHtml(said)}${stop} Fix the file, ` +
    `then run <code>gurt grants check</code>; the ` +
    `<a href="/grants">Grants</a> page lists every problem (runbook.md#grants-invalid).</p></div>`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
