/** The Grants and Audit pages, as the core reads them. */
import { Hono } from "hono";
import { PortalError } from "../context.ts";
import type { PortalEnv } from "../context.ts";
import { AuditPage } from "../pages/audit_page.tsx";
import { GrantsPage } from "../pages/grants_page.tsx";
import { adminOk, csrf, type RouteDeps } from "./route_helpers.ts";

/** The records on one page of the Audit page. */
const PAGE_SIZE = 50;

/** `/grants` and `/audit` (with `?from=SEQ` for an older page). */
export function recordRoutes(options: RouteDeps): Hono<PortalEnv> {
  const { admin } = options;
  const app = new Hono<PortalEnv>();
  app.get("/grants", async (c) => {
    const { grants, problems } = adminOk(await admin.grants());
    return c.html(<GrantsPage grants={grants} problems={problems} csrf={csrf(c)} />);
  });
  app.get("/audit", async (c) => {
    const query = c.req.query("from");
    if (query !== undefined && !/^(0|[1-9][0-9]{0,15})$/.test(query)) {
      throw new PortalError(400, `?from= takes a record's seq (a whole number), not ${query}`);
    }
    const from = query === undefined ? undefined : Number(query);
    const audit = adminOk(await admin.audit());
    const records = adminOk(await admin.auditRecords({ from, limit: PAGE_SIZE }));
    const page = { records: records.records, size: PAGE_SIZE, nextSeq: records.next_seq };
    return c.html(<AuditPage audit={audit} page={page} csrf={csrf(c)} />);
  });

  return app;
}
