/**
 * The one atomic writer, and the three places that replace a file through it (task.json, a task's
 * session state, the vault): each writes `<file>.tmp` anew, so a link someone planted there is
 * removed rather than followed, and the file it points at is left as it was.
 */
import { writeFileAtomic } from "../../mod/common/mod.ts";
import { raiseSessionState, sessionStatePath } from "../../mod/policy/mod.ts";
import { writeVaultFile } from "../../mod/vault/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { exists, withHome } from "../kit/mod.ts";

/** The writers under test: each replaces `path` (in `dir`) with some text, as gurt calls it. */
const writers: { name: string; write: (dir: string) => Promise<string> }[] = [
  {
    name: "writeFileAtomic",
    write: async (dir) => {
      await writeFileAtomic(`${dir}/task.json`, '{"id": "t1"}');
      return `${dir}/task.json`;
    },
  },
  {
    name: "raiseSessionState",
    write: async (dir) => {
      await raiseSessionState(dir, {
        task: "t1",
        label: { resultClass: "private", untrusted: true },
      });
      return sessionStatePath(dir, "t1");
    },
  },
  {
    name: "writeVaultFile",
    write: async (dir) => {
      await writeVaultFile(`${dir}/vault.env`, "A_KEY=value\n");
      return `${dir}/vault.env`;
    },
  },
];

/** The file each writer replaces, found by a first write. */
async function targetOf(writer: (typeof writers)[number]): Promise<string> {
  let name = "";
  await withHome(async (dir) => {
    name = (await writer.write(dir)).slice(dir.length);
  });
  return name;
}

for (const writer of writers) {
  Deno.test(`${writer.name} leaves a file linked at its temporary name as it was`, async () => {
    const name = await targetOf(writer);
    await withHome(async (dir) => {
      const path = `${dir}${name}`;
      await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(`${dir}/victim`, "keep me\n", { mode: 0o644 });
      await Deno.symlink(`${dir}/victim`, `${path}.tmp`);
      await writer.write(dir);
      assertEquals(await Deno.readTextFile(`${dir}/victim`), "keep me\n");
      assertEquals((await Deno.stat(`${dir}/victim`)).mode! & 0o777, 0o644);
      const written = await Deno.lstat(path);
      assert(written.isFile, `${path} is a regular file, not a link`);
      assertEquals(written.mode! & 0o777, 0o600);
      assertEquals(await exists(`${path}.tmp`), false, "the temporary file is gone");
    });
  });

  Deno.test(`${writer.name} creates nothing where a dangling link at its temporary name points`, async () => {
    const name = await targetOf(writer);
    await withHome(async (dir) => {
      const path = `${dir}${name}`;
      await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
      await Deno.symlink(`${dir}/made-elsewhere`, `${path}.tmp`);
      await writer.write(dir);
      assertEquals(await exists(`${dir}/made-elsewhere`), false);
      assert((await Deno.lstat(path)).isFile);
    });
  });
}

Deno.test("writeFileAtomic replaces the file whole: every byte of a large text, 0600, no leftovers", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/big.json`;
    await Deno.writeTextFile(path, "old");
    const text = "x".repeat(3 * 1024 * 1024 + 17);
    await writeFileAtomic(path, text);
    assertEquals(await Deno.readTextFile(path), text);
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
    assertEquals([...Deno.readDirSync(dir)].map((entry) => entry.name), ["big.json"]);
  });
});

Deno.test("writeFileAtomic gives the mode asked for where the umask would narrow it", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/shared.txt`;
    await writeFileAtomic(path, "text", { mode: 0o666 });
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o666);
  });
});
