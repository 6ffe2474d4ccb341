/**
 * The files helper (mod/exec-guest/files_helper.c): the checked-in bytes are what its source
 * builds to, it acts only beneath the root it is given, and without it the file routes refuse
 * with a runbook pointer instead of falling back to paths that can be raced.
 */
import { FilesHelper, HelperErrno } from "../../mod/exec-guest/files_helper.ts";
import { installSessionHelper } from "../../mod/exec-guest/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { call, startInProcess } from "./helpers.ts";
import { assertBuildsAsCheckedIn } from "../kit/mod.ts";

const decoder = new TextDecoder();

Deno.test("the checked-in files helper is exactly what files_helper.c builds to", async () => {
  await assertBuildsAsCheckedIn({
    script: "build_files_helper.sh",
    elf: "exec-guest/files_helper_elf.ts",
  }, "helper");
});

Deno.test("the files helper refuses a link anywhere on a path, and .. or an absolute path", async () => {
  const installed = await installSessionHelper();
  assert(
    installed?.files,
    "the files helper installs on x86-64 Linux 5.6+ with an executable /tmp",
  );
  const work = await Deno.realPath(await Deno.makeTempDir({ prefix: "gurt-files-helper-" }));
  try {
    await Deno.mkdir(`${work}/ws/d`, { recursive: true });
    await Deno.mkdir(`${work}/outside`);
    await Deno.writeTextFile(`${work}/outside/secret`, "outside");
    await Deno.writeTextFile(`${work}/ws/d/inside`, "inside");
    await Deno.symlink(`${work}/outside`, `${work}/ws/out`);
    await Deno.symlink("d", `${work}/ws/near`);
    const helper = new FilesHelper(installed.files, `${work}/ws`);
    const read = await helper.read("d/inside", { maxBytes: 100, maxEntries: 10 });
    assertEquals(read.kind === "file" && decoder.decode(read.bytes!), "inside");
    const errno = async (attempt: () => Promise<unknown>): Promise<number> => {
      try {
        await attempt();
      } catch (error) {
        if (error instanceof HelperErrno) return error.errno;
        throw error;
      }
      return 0;
    };
    const limits = { maxBytes: 100, maxEntries: 10 };
    assertEquals(await errno(() => helper.read("out/secret", limits)), 40, "ELOOP");
    assertEquals(await errno(() => helper.read("near/inside", limits)), 40, "even one inside");
    assertEquals(await errno(() => helper.read("../outside/secret", limits)), 18, "EXDEV");
    assertEquals(await errno(() => helper.read(`${work}/outside/secret`, limits)), 18, "EXDEV");
    assertEquals(await errno(() => helper.write("out/new", new Uint8Array([1]))), 40);
    assertEquals(await errno(() => helper.mkdir("out/new")), 40);
    assertEquals(await errno(() => helper.delete("out/secret", false)), 40);
    assertEquals(await errno(() => helper.move("out/secret", "d/taken")), 40);
    assertEquals(await errno(() => helper.move("d/inside", "out/put")), 40);
    // The link itself is removed, never what it names.
    assertEquals(await errno(() => helper.delete("out", true)), 0);
    assertEquals(await Deno.readTextFile(`${work}/outside/secret`), "outside");
  } finally {
    await Deno.remove(work, { recursive: true });
    await installed.remove();
  }
});

Deno.test("without the files helper, every file route answers 503 not_ready with a runbook pointer", async () => {
  const guest = await startInProcess({ filesHelper: null });
  try {
    await Deno.writeTextFile(`${guest.workspace}/a.txt`, "x");
    const answers = [
      await call(guest, `${guest.exec}/v1/files?path=a.txt`),
      await call(guest, `${guest.exec}/v1/files/raw?path=a.txt`),
      await call(guest, `${guest.exec}/v1/files`, {
        method: "PUT",
        json: { path: "b.txt", content: "y" },
      }),
      await call(guest, `${guest.exec}/v1/files?path=a.txt`, { method: "DELETE" }),
      await call(guest, `${guest.exec}/v1/files/move`, {
        method: "POST",
        json: { from: "a.txt", to: "c.txt" },
      }),
      await call(guest, `${guest.exec}/v1/files/mkdir`, { method: "POST", json: { path: "d" } }),
    ];
    for (const answer of answers) {
      assertEquals(answer.status, 503, answer.text);
      assertEquals(answer.body.error.code, "not_ready");
      assertStringIncludes(answer.body.error.message, "runbook.md#guest-files-helper-unavailable");
    }
    assertEquals(await Deno.readTextFile(`${guest.workspace}/a.txt`), "x");
    const info = await call(guest, `${guest.host}/v1/info`);
    assertEquals(info.body.capabilities.files, { enabled: true, ready: false });
  } finally {
    await guest.stop();
  }
});
