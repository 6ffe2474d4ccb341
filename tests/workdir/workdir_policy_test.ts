/**
 * The pure parts of mod/workdir: which task.workdir grant decides a folder, what is laid read-only
 * over a writable workdir from its listing, the summary of a task's writes, and the id-map helper
 * built exactly as checked in.
 */
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { parseGrant } from "../../mod/policy/mod.ts";
import {
  coverBinds,
  decideWorkdir,
  LinkedProtectedPath,
  type Listing,
  parseWorkdir,
  protectedChanges,
  summarizeWrites,
} from "../../mod/workdir/mod.ts";
import { assertBuildsAsCheckedIn } from "../kit/mod.ts";

function grantOf(id: string, text: string) {
  const parsed = parseGrant({ file: `${id}.toml`, content: text }, { appTools: new Set() });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.grant;
}

const code = (mode: string, paths: string[], more = "") =>
  `tool = "task.workdir"\nmode = "${mode}"\nmax_taint = "secret"\nresult_class = "private"\n${more}[constraints]\npaths = ${
    JSON.stringify(paths)
  }\n`;

Deno.test("a task.workdir grant needs paths, takes include_env_files, and only it does", () => {
  assert(!parseGrant({ file: "a.toml", content: code("auto", []) }, { appTools: new Set() }).ok);
  const g = grantOf("a", code("auto", ["/home/a/code"], "include_env_files = true\n"));
  assertEquals(g.includeEnvFiles, true);
  const shell = parseGrant({
    file: "s.toml",
    content:
      `tool = "shell"\nmode = "auto"\nmax_taint = "secret"\nresult_class = "private"\ninclude_env_files = true\n`,
  }, { appTools: new Set() });
  assert(!shell.ok);
});

Deno.test("the most restrictive task.workdir grant holding the folder wins, then the longest path; none is no_grant", () => {
  const now = new Date("2026-12-04T00:00:00Z");
  const at = { taint: "private" as const, now };
  const auto = grantOf("auto", code("auto", ["/home/a/code"]));
  const ask = grantOf("ask", code("ask", ["/home/a/code/shop"]));
  const deny = grantOf("deny", code("deny", ["/home/a/code/shop/secret"]));
  const grants = [auto, ask, deny];
  assertEquals(
    decideWorkdir(grants, { path: "/home/a/code/x", readOnly: false }, at).outcome,
    "allowed",
  );
  assertEquals(
    decideWorkdir(grants, { path: "/home/a/code/shop", readOnly: false }, at).outcome,
    "ask",
  );
  assertEquals(
    decideWorkdir(grants, { path: "/home/a/code/shop/secret/k", readOnly: true }, at),
    { outcome: "denied", reason: "denied_by_grant", grant: deny },
  );
  assertEquals(
    decideWorkdir(grants, { path: "/home/a/codex", readOnly: false }, at),
    { outcome: "denied", reason: "no_grant", grant: null },
  );
  assertEquals(
    decideWorkdir(grants, { path: "/home/a/code/../b", readOnly: false }, at).outcome,
    "denied",
  );
  const low = grantOf("low", code("auto", ["/home/b"]).replace('"secret"', '"private"'));
  assertEquals(
    decideWorkdir([low], { path: "/home/b/x", readOnly: false }, { taint: "secret", now }),
    { outcome: "denied", reason: "taint_too_high", grant: null },
  );
});

Deno.test("--workdir takes PATH and PATH:ro, and refuses a relative path or one with ..", () => {
  assertEquals(parseWorkdir("/a/b"), { path: "/a/b", readOnly: false });
  assertEquals(parseWorkdir("/a/b:ro"), { path: "/a/b", readOnly: true });
  assertThrows(() => parseWorkdir("a/b"), Error, "absolute");
  assertThrows(() => parseWorkdir("/a/../b"), Error, "..");
  assertThrows(() => parseWorkdir("/"), Error, "whole file system");
});

function listing(entries: Record<string, "file" | "dir" | "link">): Listing {
  return {
    entries: new Map(
      Object.entries(entries).map(([path, kind]) => [path, { kind, size: 1, mtime: 1, ctime: 1 }]),
    ),
    truncated: false,
  };
}

Deno.test("over a writable workdir: each protected path read-only (made where missing), .env files covered, nothing under a file, a link refused", () => {
  const binds = coverBinds(
    listing({
      ".git": "dir",
      ".git/hooks": "dir",
      ".env": "file",
      "a/.env.local": "file",
      ".idea": "file",
    }),
    { readOnly: false, includeEnvFiles: false, extra: ["deploy/"] },
  );
  const by = new Map(binds.map((bind) => [bind.rel, bind]));
  assertEquals(by.get(".git/hooks"), {
    rel: ".git/hooks",
    from: "folder",
    made: false,
    why: "protected",
  });
  assertEquals(by.get(".git/config")?.from, "emptyFile");
  assertEquals(by.get(".git/config")?.made, true);
  assertEquals(by.get(".vscode")?.from, "emptyDir");
  assertEquals(by.get(".idea")?.from, "folder"); // a file of that name: itself, read-only
  assertEquals(by.get(".env")?.from, "emptyFile");
  assertEquals(by.get("a/.env.local")?.why, "env");
  assertEquals(by.get(".envrc")?.from, "emptyFile");
  assertEquals(by.get("deploy")?.from, "emptyDir");
  // Parents before children, for the sandbox's binds.
  assert(binds.findIndex((b) => b.rel === ".git/hooks") > binds.findIndex((b) => b.rel === ".env"));
  // Read-only: only the covers of what exists.
  const ro = coverBinds(listing({ ".env": "file" }), {
    readOnly: true,
    includeEnvFiles: false,
    extra: [],
  });
  assertEquals(ro.map((b) => b.rel), [".env"]);
  assertEquals(
    coverBinds(listing({ ".env": "file" }), { readOnly: true, includeEnvFiles: true, extra: [] }),
    [],
  );
  assertThrows(
    () =>
      coverBinds(listing({ ".claude": "link" }), {
        readOnly: false,
        includeEnvFiles: false,
        extra: [],
      }),
    LinkedProtectedPath,
  );
  assertThrows(
    () =>
      coverBinds(listing({ ".git": "link" }), {
        readOnly: false,
        includeEnvFiles: false,
        extra: [],
      }),
    LinkedProtectedPath,
  );
});

Deno.test("the summary of a task's writes: files added, changed and removed with their sizes, folders not counted", () => {
  const before: Listing = {
    entries: new Map([
      ["a.txt", { kind: "file", size: 3, mtime: 1, ctime: 1 }],
      ["b.txt", { kind: "file", size: 4, mtime: 1, ctime: 1 }],
      ["same.txt", { kind: "file", size: 4, mtime: 1, ctime: 1 }],
      ["dir", { kind: "dir", size: 0, mtime: 1, ctime: 1 }],
    ]),
    truncated: false,
  };
  const after: Listing = {
    entries: new Map([
      ["a.txt", { kind: "file", size: 3, mtime: 2, ctime: 2 }],
      ["same.txt", { kind: "file", size: 4, mtime: 1, ctime: 1 }],
      ["dir", { kind: "dir", size: 0, mtime: 2, ctime: 2 }],
      ["dir/new.txt", { kind: "file", size: 10, mtime: 2, ctime: 2 }],
    ]),
    truncated: false,
  };
  const summary = summarizeWrites("/w", before, after);
  assertEquals(
    {
      added: summary.added,
      changed: summary.changed,
      removed: summary.removed,
      bytes: summary.bytesWritten,
    },
    { added: 1, changed: 1, removed: 1, bytes: 13 },
  );
  assertEquals(summary.files.added, [{ path: "dir/new.txt", before: null, after: 10 }]);
  assertEquals(summary.files.changed, [{ path: "a.txt", before: 3, after: 3 }]);
  assertEquals(summary.files.removed, [{ path: "b.txt", before: 4, after: null }]);
});

Deno.test("the checked-in id-map helper is exactly what idmap_helper.c builds to", async () => {
  await assertBuildsAsCheckedIn(
    { script: "build_idmap_helper.sh", elf: "workdir/idmap_helper_elf.ts" },
    "id-map helper",
  );
});

Deno.test("the end's comparison flags a change under a read-only protected path as breached, and one under a protected name deeper in the folder as nested", () => {
  const covers = coverBinds(listing({ ".git": "dir", ".git/hooks": "dir" }), {
    readOnly: false,
    includeEnvFiles: true,
    extra: [],
  });
  assertEquals(
    protectedChanges(
      [
        ".git/hooks/pre-commit",
        ".git/index",
        "a/.vscode/settings.json",
        "a/vscode",
        "sub/.git/config",
      ],
      covers,
    ),
    {
      breached: [".git/hooks/pre-commit"],
      nested: ["a/.vscode/settings.json", "sub/.git/config"],
    },
  );
});
