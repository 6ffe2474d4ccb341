/**
 * The answers of the admin socket's /apps routes (mod/core/app_routes.ts), as the portal's Apps
 * page reads them. Every text in them but the names the core checked came from the app's manifest
 * or its server: the pages show it as data.
 */
import { z } from "zod";

/** One app as `GET /apps` lists it. */
export const appSummaryView = z.object({
  name: z.string(),
  kind: z.string(),
  enabled: z.boolean(),
  state: z.string(),
  tools: z.number().int().nonnegative(),
  last_error: z.string().nullable(),
});
export type AppSummaryView = z.infer<typeof appSummaryView>;

/** `GET /apps`. */
export const appsAnswer = z.object({ apps: z.array(appSummaryView) });

/** One app as `GET /apps/:name` shows it. */
export const appDetailView = appSummaryView.extend({
  description: z.string().nullable(),
  folder: z.string(),
  manifest_sha256: z.string(),
  disabled_by: z.enum(["owner", "manifest"]).nullable(),
  start: z.string(),
  hosts: z.array(z.string()),
  secrets: z.array(z.object({
    name: z.string(),
    reaches: z.string(),
    set: z.boolean(),
    usable: z.string().nullable(),
  })),
  tool_list: z.array(z.object({
    name: z.string(),
    server_name: z.string(),
    description: z.string(),
    read_only: z.boolean(),
    cost_cents: z.number(),
    input: z.unknown(),
  })),
  left_out: z.array(z.object({ server_name: z.string(), problem: z.string() })),
  paused_until: z.string().nullable(),
});
export type AppDetailView = z.infer<typeof appDetailView>;

/** `GET /apps/:name`, `POST /apps`, `POST /apps/:name/enable|disable|reload`. */
export const appAnswer = z.object({ app: appDetailView });

/** `DELETE /apps/:name`. */
export const appRemovedAnswer = z.object({ removed: z.string() });

/** `GET /apps/check`: each app's problems, none when every manifest reads. */
export const appsCheckAnswer = z.object({
  problems: z.array(z.object({ app: z.string(), problem: z.string() })),
});

/** What `POST /apps` is sent: a folder's files, or an npm package the core installs. */
export type AddAppInput =
  | { name: string; files: { path: string; executable: boolean; data: string }[] }
  | { name: string; npm: string };
