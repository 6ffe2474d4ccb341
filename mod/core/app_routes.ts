/**
 * The admin socket's /apps routes: `gurt app list|show|add|remove|enable|disable|check` and the
 * portal's Apps page read and change the owner's apps through these.
 */
import { Hono } from "hono";
import { z } from "zod";
import { HttpError, parseJsonBody, readBodyBytes } from "../common/mod.ts";
import type { AppManager } from "./app_manager.ts";

const addBody = z.union([
  z.strictObject({ name: z.string().min(1).max(64), npm: z.string().min(1).max(300) }),
  z.strictObject({
    name: z.string().min(1).max(64),
    files: z.array(z.strictObject({
      path: z.string().min(1).max(1024),
      executable: z.boolean(),
      data: z.string().max(96 * 1024 * 1024),
    })).max(5000),
  }),
]);

const NAME = /^[a-z][a-z0-9-]{0,31}$/;

function appName(text: string): string {
  if (!NAME.test(text)) throw new HttpError(400, `${JSON.stringify(text)} is not an app's name`);
  return text;
}

/** The /apps routes over the core's app manager. */
export function appRoutes(apps: AppManager): Hono {
  const app = new Hono();
  app.get("/", (c) => c.json({ apps: apps.list() }));
  app.get("/check", async (c) => c.json({ problems: await apps.check() }));
  app.post("/", async (c) => {
    const body = parseJsonBody(await readBodyBytes(c.req.raw, 96 * 1024 * 1024), addBody);
    return c.json({ app: await apps.add(body) });
  });
  app.get("/:name", (c) => c.json({ app: apps.show(appName(c.req.param("name"))) }));
  app.delete("/:name", async (c) => {
    const name = appName(c.req.param("name"));
    await apps.remove(name);
    return c.json({ removed: name });
  });
  app.post("/:name/reload", async (c) => {
    return c.json({ app: await apps.reload(appName(c.req.param("name"))) });
  });
  app.post("/:name/enable", async (c) => {
    return c.json({ app: await apps.setEnabled(appName(c.req.param("name")), true) });
  });
  app.post("/:name/disable", async (c) => {
    return c.json({ app: await apps.setEnabled(appName(c.req.param("name")), false) });
  });
  return app;
}
