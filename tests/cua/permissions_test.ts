/**
 * The desktop runs inside a role Worker holding only the code folder and desktopPermissionNeeds:
 * the list is complete (start, input, observation, recording, Chromium all work) and narrow
 * (a file outside the workspace cannot be read, nor written through a planted symlink).
 */
import { assertEquals } from "../assert.ts";
import { codeDir, desktopPermissionNeeds, runRole } from "../../mod/roles/mod.ts";
import { hasXvfb, testOptions } from "./fixture.ts";

Deno.test({
  name: "the desktop works inside a Worker with only the permissions desktopPermissionNeeds lists",
  ignore: !hasXvfb(),
}, async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "gurt-cua-role-" }));
  const outside = await Deno.makeTempFile({ prefix: "gurt-cua-outside-" });
  try {
    const options = testOptions(workspace, {
      chromeProfile: `${workspace}/.home/chrome-profile`,
      vncPassword: "rolepass",
    });
    // Symlinks planted where the artifacts go must be replaced, never written through.
    await Deno.mkdir(`${workspace}/role-run`);
    await Deno.writeTextFile(outside, "untouched");
    await Deno.symlink(outside, `${workspace}/role-run/end.png`);
    await Deno.symlink(outside, `${workspace}/role-run/recording.mp4`);
    const needs = desktopPermissionNeeds(options);
    const status = await runRole({
      role: "guest",
      permissions: {
        read: [codeDir(), ...needs.read],
        write: needs.write,
        net: needs.net,
        env: true,
        run: needs.run,
        sys: needs.sys,
        ffi: false,
        import: false,
      },
      entry: new URL("./desktop_role.ts", import.meta.url),
      args: { options, outside },
    });
    assertEquals(status, 0);
    const results = JSON.parse(await Deno.readTextFile(`${workspace}/results.json`));
    assertEquals(results.batch.status, 200, JSON.stringify(results.batch));
    assertEquals(results.batch.body.ok, true);
    assertEquals(results.batch.body.steps[0].observed.url_before, "about:blank");
    assertEquals(
      results.batch.body.artifacts.map((a: { kind: string }) => a.kind),
      ["video", "screenshot"],
    );
    assertEquals(results.chrome.ready, true);
    assertEquals(results.outside, "NotCapable");
    assertEquals(await Deno.readTextFile(outside), "untouched");
    for (const name of ["end.png", "recording.mp4"]) {
      const entry = await Deno.lstat(`${workspace}/role-run/${name}`);
      assertEquals([entry.isFile, entry.isSymlink], [true, false], name);
    }
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(outside);
  }
});
