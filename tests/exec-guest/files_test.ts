/**
 * The file routes over real HTTP: every rule of docs/guest-api.md#files, and one test per kind of
 * jail escape.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { call, type GuestUnderTest, withGuest } from "./helpers.ts";

const files = (guest: GuestUnderTest, query: string) => `${guest.exec}/v1/files${query}`;

Deno.test("write then read a file as utf8 and base64; invalid UTF-8 comes back as base64", async () => {
  await withGuest({}, async (guest) => {
    const written = await call(guest, files(guest, ""), {
      method: "PUT",
      json: { path: "notes/hello.txt", content: "hello", encoding: "utf8", create_dirs: true },
    });
    assertEquals(written.status, 200);
    assertEquals(written.body, { path: `${guest.workspace}/notes/hello.txt`, bytes_written: 5 });
    const read = await call(guest, files(guest, "?path=notes/hello.txt"));
    assertEquals(read.body, {
      kind: "file",
      path: `${guest.workspace}/notes/hello.txt`,
      size: 5,
      encoding: "utf8",
      content: "hello",
    });
    const b64 = await call(
      guest,
      files(guest, `?path=${guest.workspace}/notes/hello.txt&encoding=base64`),
    );
    assertEquals(b64.body.encoding, "base64");
    assertEquals(b64.body.content, btoa("hello"));
    await Deno.writeFile(`${guest.workspace}/bin.dat`, new Uint8Array([0xff, 0xfe, 0x41]));
    const binary = await call(guest, files(guest, "?path=bin.dat"));
    assertEquals(binary.body.encoding, "base64");
    assertEquals(binary.body.content, btoa("\xff\xfeA"));
  });
});

Deno.test("write from base64; a missing parent without create_dirs is 404; too large is 413", async () => {
  await withGuest({ maxFileBytes: 10 }, async (guest) => {
    const ok = await call(guest, files(guest, ""), {
      method: "PUT",
      json: { path: "b.bin", content: btoa("\x00\x01\x02"), encoding: "base64" },
    });
    assertEquals(ok.body.bytes_written, 3);
    assertEquals(await Deno.readFile(`${guest.workspace}/b.bin`), new Uint8Array([0, 1, 2]));
    const orphan = await call(guest, files(guest, ""), {
      method: "PUT",
      json: { path: "no/such/dir/x.txt", content: "x" },
    });
    assertEquals(orphan.status, 404);
    assertEquals(orphan.body.error.code, "not_found");
    const big = await call(guest, files(guest, ""), {
      method: "PUT",
      json: { path: "big.txt", content: "x".repeat(11) },
    });
    assertEquals(big.status, 413);
    assertEquals(big.body.error.code, "payload_too_large");
    const bigRaw = await call(guest, files(guest, "/raw?path=big.bin"), {
      method: "PUT",
      body: new Uint8Array(11),
      headers: { "content-type": "application/octet-stream" },
    });
    assertEquals(bigRaw.status, 413);
  });
});

Deno.test("raw PUT and GET move bytes unchanged", async () => {
  await withGuest({}, async (guest) => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7) & 0xff);
    const put = await call(guest, files(guest, "/raw?path=d/raw.bin&create_dirs=true"), {
      method: "PUT",
      body: bytes,
      headers: { "content-type": "application/octet-stream" },
    });
    assertEquals(put.body, { path: `${guest.workspace}/d/raw.bin`, bytes_written: 70_000 });
    const response = await fetch(files(guest, "/raw?path=d/raw.bin"), {
      headers: { authorization: `Bearer ${guest.token}` },
    });
    assertEquals(response.headers.get("content-type"), "application/octet-stream");
    assertEquals(new Uint8Array(await response.arrayBuffer()), bytes);
  });
});

Deno.test("a directory lists its entries; past BOX_MAX_DIR_ENTRIES it says truncated", async () => {
  await withGuest({ maxDirEntries: 3 }, async (guest) => {
    await Deno.writeTextFile(`${guest.workspace}/a.txt`, "12345");
    await Deno.mkdir(`${guest.workspace}/b`);
    const root = await call(guest, files(guest, "?path="));
    assertEquals(root.body, {
      kind: "directory",
      path: guest.workspace,
      entries: [{ name: "a.txt", kind: "file", size: 5 }, {
        name: "b",
        kind: "directory",
        size: root.body.entries[1].size,
      }],
      truncated: false,
    });
    for (let i = 0; i < 5; i++) await Deno.writeTextFile(`${guest.workspace}/b/${i}`, "");
    const capped = await call(guest, files(guest, "?path=b"));
    assertEquals(capped.body.entries.length, 3);
    assertEquals(capped.body.truncated, true);
  });
});

Deno.test("delete: a file; a non-empty directory only with recursive; never the root", async () => {
  await withGuest({}, async (guest) => {
    await Deno.mkdir(`${guest.workspace}/d/e`, { recursive: true });
    await Deno.writeTextFile(`${guest.workspace}/d/e/f.txt`, "x");
    const file = await call(guest, files(guest, "?path=d/e/f.txt"), { method: "DELETE" });
    assertEquals(file.body, { path: `${guest.workspace}/d/e/f.txt`, deleted: true });
    await Deno.writeTextFile(`${guest.workspace}/d/e/g.txt`, "x");
    const refused = await call(guest, files(guest, "?path=d"), { method: "DELETE" });
    assertEquals(refused.status, 400);
    assertStringIncludes(refused.body.error.message, "recursive=true");
    const recursive = await call(guest, files(guest, "?path=d&recursive=true"), {
      method: "DELETE",
    });
    assertEquals(recursive.body.deleted, true);
    for (const root of ["", ".", "/", guest.workspace, "a/.."]) {
      const answer = await call(
        guest,
        files(guest, `?path=${encodeURIComponent(root)}&recursive=true`),
        {
          method: "DELETE",
        },
      );
      assert(answer.status === 400, `deleting ${JSON.stringify(root)} is refused`);
    }
    assert((await Deno.stat(guest.workspace)).isDirectory, "the root is still there");
    const missing = await call(guest, files(guest, "?path=nope"), { method: "DELETE" });
    assertEquals(missing.status, 404);
  });
});

Deno.test("mkdir makes parents by default, says created false when it exists, 404 without parents", async () => {
  await withGuest({}, async (guest) => {
    const made = await call(guest, files(guest, "/mkdir"), {
      method: "POST",
      json: { path: "notes/sub" },
    });
    assertEquals(made.body, { path: `${guest.workspace}/notes/sub`, created: true });
    const again = await call(guest, files(guest, "/mkdir"), {
      method: "POST",
      json: { path: "notes/sub", parents: true },
    });
    assertEquals(again.body.created, false);
    const orphan = await call(guest, files(guest, "/mkdir"), {
      method: "POST",
      json: { path: "x/y", parents: false },
    });
    assertEquals(orphan.status, 404);
  });
});

Deno.test("move: the destination must not exist; the root cannot be moved", async () => {
  await withGuest({}, async (guest) => {
    await Deno.writeTextFile(`${guest.workspace}/old.txt`, "x");
    await Deno.mkdir(`${guest.workspace}/notes`);
    const moved = await call(guest, files(guest, "/move"), {
      method: "POST",
      json: { from: "old.txt", to: "notes/new.txt" },
    });
    assertEquals(moved.body, {
      from: `${guest.workspace}/old.txt`,
      to: `${guest.workspace}/notes/new.txt`,
    });
    await Deno.writeTextFile(`${guest.workspace}/other.txt`, "y");
    const clash = await call(guest, files(guest, "/move"), {
      method: "POST",
      json: { from: "other.txt", to: "notes/new.txt" },
    });
    assertEquals(clash.status, 409);
    assertEquals(await Deno.readTextFile(`${guest.workspace}/notes/new.txt`), "x");
    const root = await call(guest, files(guest, "/move"), {
      method: "POST",
      json: { from: "", to: "elsewhere" },
    });
    assertEquals(root.status, 400);
  });
});

/** Every route that takes a path, called with `path`; each answer must be 400 path_escape. */
async function assertEscapes(guest: GuestUnderTest, path: string): Promise<void> {
  const q = encodeURIComponent(path);
  const answers = [
    await call(guest, files(guest, `?path=${q}`)),
    await call(guest, files(guest, `/raw?path=${q}`)),
    await call(guest, files(guest, `/raw?path=${q}`), {
      method: "PUT",
      body: "x",
      headers: { "content-type": "application/octet-stream" },
    }),
    await call(guest, files(guest, ""), { method: "PUT", json: { path, content: "x" } }),
    await call(guest, files(guest, `?path=${q}`), { method: "DELETE" }),
    await call(guest, files(guest, "/mkdir"), { method: "POST", json: { path } }),
    await call(guest, files(guest, "/move"), { method: "POST", json: { from: path, to: "m" } }),
    await call(guest, files(guest, "/move"), {
      method: "POST",
      json: { from: "in.txt", to: path },
    }),
    await call(guest, `${guest.exec}/v1/exec`, {
      method: "POST",
      json: { command: ["true"], cwd: path },
    }),
  ];
  for (const [i, answer] of answers.entries()) {
    assertEquals(answer.status, 400, `call ${i} with ${path}: ${answer.text}`);
    assertEquals(answer.body.error.code, "path_escape", `call ${i} with ${path}`);
  }
}

async function outsideDir(): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "gurt-outside-" }));
  await Deno.writeTextFile(`${dir}/secret.txt`, "outside");
  await Deno.mkdir(`${dir}/d`);
  return dir;
}

Deno.test("jail escape by .. is 400 path_escape on every route", async () => {
  await withGuest({}, async (guest) => {
    await Deno.writeTextFile(`${guest.workspace}/in.txt`, "x");
    await assertEscapes(guest, "../secret.txt");
    await assertEscapes(guest, "a/../../secret.txt");
    await assertEscapes(guest, `${guest.workspace}/../x`);
  });
});

Deno.test("jail escape by an absolute path outside is 400 path_escape on every route", async () => {
  await withGuest({}, async (guest) => {
    await Deno.writeTextFile(`${guest.workspace}/in.txt`, "x");
    await assertEscapes(guest, "/etc/passwd");
    await assertEscapes(guest, `${guest.workspace}-sibling/x`);
  });
});

Deno.test("jail escape through a symlink that points outside is 400 path_escape on every route", async () => {
  const outside = await outsideDir();
  try {
    await withGuest({}, async (guest) => {
      await Deno.writeTextFile(`${guest.workspace}/in.txt`, "x");
      await Deno.symlink(outside, `${guest.workspace}/out-dir`);
      await Deno.symlink(`${outside}/secret.txt`, `${guest.workspace}/out-file`);
      await Deno.symlink("../../../../../../../../..", `${guest.workspace}/up`);
      await assertEscapes(guest, "out-dir/secret.txt");
      await assertEscapes(guest, "out-dir/d/new.txt");
      await assertEscapes(guest, "up/etc/passwd");
      const read = await call(guest, files(guest, "?path=out-file"));
      assertEquals(read.body.error.code, "path_escape");
      const write = await call(guest, files(guest, ""), {
        method: "PUT",
        json: { path: "out-file", content: "overwritten" },
      });
      assertEquals(write.body.error.code, "path_escape");
      assertEquals(await Deno.readTextFile(`${outside}/secret.txt`), "outside");
      // The link itself may be removed: that acts on the link, never on what it names.
      const unlink = await call(guest, files(guest, "?path=out-file"), { method: "DELETE" });
      assertEquals(unlink.body.deleted, true);
      assertEquals(await Deno.readTextFile(`${outside}/secret.txt`), "outside");
    });
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("a symlink is checked at the moment of use: re-pointed outside, the next read is refused", async () => {
  const outside = await outsideDir();
  try {
    await withGuest({}, async (guest) => {
      await Deno.mkdir(`${guest.workspace}/real`);
      await Deno.writeTextFile(`${guest.workspace}/real/secret.txt`, "inside");
      await Deno.symlink(`${guest.workspace}/real`, `${guest.workspace}/link`);
      const before = await call(guest, files(guest, "?path=link/secret.txt"));
      assertEquals(before.body.content, "inside");
      await Deno.remove(`${guest.workspace}/link`);
      await Deno.symlink(outside, `${guest.workspace}/link`);
      const after = await call(guest, files(guest, "?path=link/secret.txt"));
      assertEquals(after.status, 400);
      assertEquals(after.body.error.code, "path_escape");
    });
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("an encoded %2e%2e in the query is decoded and refused as path_escape", async () => {
  await withGuest({}, async (guest) => {
    const answer = await call(guest, files(guest, "?path=%2e%2e/%2e%2e/etc/passwd"));
    assertEquals(answer.status, 400);
    assertEquals(answer.body.error.code, "path_escape");
  });
});
