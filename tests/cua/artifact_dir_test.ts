/** artifact_dir through the exec guest's Jail: made inside the workspace, never through a link out. */
import { GuestError } from "../../mod/exec-guest/mod.ts";
import { resolveArtifactDir } from "../../mod/cua/recipe_runner.ts";
import { assert, assertEquals } from "../assert.ts";

async function withWorkspace(work: (workspace: string, outside: string) => Promise<void>) {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "gurt-cua-ws-" }));
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "gurt-cua-out-" }));
  try {
    await work(workspace, outside);
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
}

async function refusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    assert(error instanceof GuestError, String(error));
    return `${error.status} ${error.code}`;
  }
  throw new Error("no refusal");
}

Deno.test("artifact_dir makes every missing folder inside and answers its path without links", async () => {
  await withWorkspace(async (workspace) => {
    await Deno.mkdir(`${workspace}/real`);
    await Deno.symlink(`${workspace}/real`, `${workspace}/alias`);
    assertEquals(await resolveArtifactDir(workspace, "runs/a/b"), `${workspace}/runs/a/b`);
    assert((await Deno.stat(`${workspace}/runs/a/b`)).isDirectory);
    assertEquals(await resolveArtifactDir(workspace, "alias/x"), `${workspace}/real/x`);
    assertEquals(await resolveArtifactDir(workspace, `${workspace}/runs`), `${workspace}/runs`);
    assertEquals(await resolveArtifactDir(workspace, "."), workspace);
  });
});

Deno.test("artifact_dir outside, through a link out or with .. is path_escape, and nothing is made", async () => {
  await withWorkspace(async (workspace, outside) => {
    await Deno.symlink(outside, `${workspace}/out`);
    await Deno.mkdir(`${workspace}/in`);
    await Deno.symlink(`${outside}/new`, `${workspace}/in/dangling`);
    for (const dir of ["../x", "in/../../x", "/etc", `${outside}/x`, "out/sub", "in/dangling/x"]) {
      assertEquals(await refusal(resolveArtifactDir(workspace, dir)), "400 path_escape", dir);
    }
    assertEquals([...Deno.readDirSync(outside)], []);
  });
});

Deno.test("artifact_dir through a file is invalid_request", async () => {
  await withWorkspace(async (workspace) => {
    await Deno.writeTextFile(`${workspace}/file`, "");
    assertEquals(await refusal(resolveArtifactDir(workspace, "file")), "400 invalid_request");
    assertEquals(await refusal(resolveArtifactDir(workspace, "file/x")), "400 invalid_request");
  });
});
