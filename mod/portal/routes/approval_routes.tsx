/** The Approvals page, its live stream, and the Approve and Refuse forms. */
import { Hono } from "hono";
import type { PendingApproval } from "../../broker/mod.ts";
import type { AdminFetch } from "../admin_client.ts";
import type { PortalEnv } from "../context.ts";
import type { LiveStreams } from "../live_events.ts";
import { ApprovalsList, ApprovalsPage } from "../pages/approvals_page.tsx";
import { adminOk, csrf, formText, type RouteDeps } from "./route_helpers.ts";

const BY = "the owner, in the portal";
const WORD = /^[a-z][a-z_]{0,40}$/;

/** `/approvals`, `/events/approvals`, and the answers. */
export function approvalRoutes(options: RouteDeps & { streams: LiveStreams }): Hono<PortalEnv> {
  const { deps, admin, streams } = options;
  const app = new Hono<PortalEnv>();
  app.get("/approvals", async (c) => {
    const items = await pending(admin);
    const answered = c.req.query("answered");
    const outcome = c.req.query("outcome") ?? "";
    const notice = answered !== undefined && /^\d{1,16}$/.test(answered) && WORD.test(outcome)
      ? `Approval ${answered}: ${outcome.replaceAll("_", " ")}.`
      : null;
    return c.html(
      <ApprovalsPage items={items} now={deps.clock()} csrf={csrf(c)} notice={notice} />,
    );
  });
  app.get("/events/approvals", (c) => {
    const token = csrf(c);
    return streams.serve(c, {
      subscribe: (listener) => deps.approvals.onChange(listener),
      render: async () =>
        String(
          await <ApprovalsList items={await pending(admin)} now={deps.clock()} csrf={token} />,
        ),
    });
  });
  app.post("/approvals/:id/approve", async (c) => {
    const id = c.req.param("id");
    const answer = await adminOk(admin, {
      method: "POST",
      path: `/approvals/${id}/approve`,
      body: { by: BY },
    });
    return c.redirect(`/approvals?${answeredQuery(id, answer.body.outcome)}`, 303);
  });
  app.post("/approvals/:id/refuse", async (c) => {
    const id = c.req.param("id");
    const reason = formText(await c.req.parseBody(), "reason") || undefined;
    const answer = await adminOk(admin, {
      method: "POST",
      path: `/approvals/${id}/refuse`,
      body: { reason },
    });
    return c.redirect(`/approvals?${answeredQuery(id, answer.body.outcome)}`, 303);
  });

  return app;
}

async function pending(admin: AdminFetch): Promise<PendingApproval[]> {
  return (await adminOk(admin, { method: "GET", path: "/approvals" })).body.items;
}

function answeredQuery(id: string, outcome: { outcome: string; reason?: string }): string {
  const word = outcome.outcome === "allowed" ? "allowed" : `denied_${outcome.reason ?? ""}`;
  return `answered=${encodeURIComponent(id)}&outcome=${encodeURIComponent(word)}`;
}
