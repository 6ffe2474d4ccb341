/**
 * A role entry for the permission test: starts the desktop inside a Worker that holds only the
 * guest's code folder and what desktopPermissionNeeds lists, drives it, and shows what it may not.
 */
import { createDesktop, type DesktopOptions } from "../../mod/cua/mod.ts";
import type { RoleMain } from "../../mod/roles/mod.ts";

const main: RoleMain<{ options: DesktopOptions; outside: string }> = async (args) => {
  const desktop = createDesktop(args.options);
  const [cua, status] = desktop.mounts();
  const results: Record<string, unknown> = {};
  try {
    await desktop.start();
    const response = await cua.app.request("/batch", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        record: true,
        artifact_dir: "role-run",
        observe: "page",
        steps: [{ op: "click", x: 640, y: 400 }, { op: "type", text: "hi" }],
      }),
    });
    results.batch = { status: response.status, body: await response.json() };
    results.chrome = await (await status.app.request("/chrome")).json();
    try {
      await Deno.readTextFile(args.outside);
      results.outside = "read";
    } catch (error) {
      results.outside = (error as Error).name;
    }
  } finally {
    await desktop.stop();
  }
  await Deno.writeTextFile(`${args.options.workspace}/results.json`, JSON.stringify(results));
  return 0;
};
export default main;
