/** The Grants and Audit pages: read from the box home's files. */
import { Hono } from "hono";
import type { PortalEnv } from "../context.ts";
import { AuditPage } from "../pages/audit_page.tsx";
import { GrantsPage } from "../pages/grants_page.tsx";
import { auditView, grantViews } from "../views.ts";
import { csrf, type RouteDeps } from "./route_helpers.ts";

/** `/grants` and `/audit`. */
export function recordRoutes(options: Pick<RouteDeps, "deps">): Hono<PortalEnv> {
  const { deps } = options;
  const app = new Hono<PortalEnv>();
  app.get("/grants", async (c) => {
    const { grants, problems } = await grantViews(deps.home, deps.registry.appToolNames());
    return c.html(<GrantsPage grants={grants} problems={problems} csrf={csrf(c)} />);
  });
  app.get("/audit", async (c) => {
    return c.html(<AuditPage audit={await auditView(deps.home)} csrf={csrf(c)} />);
  });

  return app;
}
