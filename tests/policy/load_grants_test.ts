/**
 * Loading from a real grants directory (docs/grants.md#where-grants-live): every file at every
 * decision, one invalid file invalidating the set, a missing directory invalid and an empty one
 * valid.
 */
import {
  decideLoaded,
  GrantsInvalidReporter,
  loadGrants,
  type ToolRequest,
} from "../../mod/policy/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { at, NOTES_READ } from "./helpers.ts";
import { grant, withHome } from "../kit/mod.ts";
import { standardRegistry } from "../../mod/tools/mod.ts";

/** The app tools of a standard box, as the core passes them. */
const APP_TOOLS = standardRegistry().appToolNames();

const options = { appTools: APP_TOOLS };
const readNote: ToolRequest = { tool: "read_file", arguments: { path: "/home/kyle/notes/a.md" } };

function withGrantsDir(work: (dir: string) => Promise<void>): Promise<void> {
  return withHome((home) => work(`${home}/grants`), { prefix: "gurt-policy-", dirs: ["grants"] });
}

async function outcomeOf(dir: string, request = readNote): Promise<string> {
  const outcome = decideLoaded(request, { load: await loadGrants(dir, options), ...at() });
  return outcome.kind === "denied" ? `denied ${outcome.denial.reason}` : outcome.kind;
}

Deno.test("the seed's notes-read.toml loads from disk and allows a read under its path", async () => {
  await withGrantsDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/notes-read.toml`, NOTES_READ);
    const load = await loadGrants(dir, options);
    assert(load.ok, JSON.stringify(load));
    const bytes = await Deno.readFile(`${dir}/notes-read.toml`);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
    assertEquals(load.grants.grants[0].sha256, hex, "the hash is the sha256 of the file bytes");
    assertEquals(load.grants.grants[0].file, `${dir}/notes-read.toml`);
    assertEquals(await outcomeOf(dir), "allowed");
    const outside = { tool: "read_file", arguments: { path: "/home/kyle/notes2/a.md" } };
    assertEquals(await outcomeOf(dir, outside), "denied no_grant");
  });
});

Deno.test("one invalid file among valid ones denies with grants_invalid a call a valid one allows", async () => {
  await withGrantsDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/notes-read.toml`, NOTES_READ);
    await Deno.writeTextFile(
      `${dir}/web.toml`,
      grant({ tool: "http_fetch", hosts: ["example.com"] }),
    );
    assertEquals(await outcomeOf(dir), "allowed");
    await Deno.writeTextFile(
      `${dir}/typo.toml`,
      grant({ tool: "read_file", mode: "deny", paths: ["/home/kyle/notes"] }).replace(
        "mode",
        "mdoe",
      ),
    );
    assertEquals(await outcomeOf(dir), "denied grants_invalid");
    const load = await loadGrants(dir, options);
    assert(!load.ok);
    assertEquals(load.problems.map((p) => p.file), [`${dir}/typo.toml`, `${dir}/typo.toml`]);
    assertStringIncludes(load.problems.map((p) => p.problem).join("\n"), "mdoe: unknown field");
  });
});

Deno.test("a change to a grant file applies to the very next decision", async () => {
  await withGrantsDir(async (dir) => {
    const file = `${dir}/notes.toml`;
    await Deno.writeTextFile(file, grant({ tool: "read_file", paths: ["/home/kyle/notes"] }));
    assertEquals(await outcomeOf(dir), "allowed");
    await Deno.writeTextFile(
      file,
      grant({ tool: "read_file", mode: "ask", paths: ["/home/kyle/notes"] }),
    );
    assertEquals(await outcomeOf(dir), "ask");
    await Deno.remove(file);
    assertEquals(await outcomeOf(dir), "denied no_grant");
  });
});

Deno.test("an empty grants directory is a valid empty set; files not ending in .toml are ignored", async () => {
  await withGrantsDir(async (dir) => {
    const empty = await loadGrants(dir, options);
    assert(empty.ok);
    assertEquals(empty.grants.grants.length, 0);
    await Deno.writeTextFile(`${dir}/README`, "not a grant");
    await Deno.writeTextFile(`${dir}/old.toml.off`, "tool = ");
    await Deno.writeTextFile(`${dir}/.notes.toml.swp`, "\u0000");
    const ignored = await loadGrants(dir, options);
    assert(ignored.ok, JSON.stringify(ignored));
    assertEquals(await outcomeOf(dir), "denied no_grant");
  });
});

Deno.test("a missing grants directory makes the set invalid", async () => {
  await withGrantsDir(async (dir) => {
    const load = await loadGrants(`${dir}/absent`, options);
    assertEquals(load, {
      ok: false,
      problems: [{
        file: `${dir}/absent`,
        line: null,
        problem: "the grants directory does not exist",
      }],
    });
  });
});

Deno.test("a .toml entry that cannot be read as a file makes the set invalid", async () => {
  await withGrantsDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/notes-read.toml`, NOTES_READ);
    await Deno.mkdir(`${dir}/folder.toml`);
    const load = await loadGrants(dir, options);
    assert(!load.ok);
    assertEquals(load.problems.length, 1);
    assertEquals(load.problems[0].file, `${dir}/folder.toml`);
    assertStringIncludes(load.problems[0].problem, "the file cannot be read");
  });
});

Deno.test("the core's reporter prints each set of problems once, and again after a fix and a relapse", async () => {
  await withGrantsDir(async (dir) => {
    const reporter = new GrantsInvalidReporter();
    await Deno.writeTextFile(`${dir}/x.toml`, "tool = ");
    const first = reporter.next(await loadGrants(dir, options));
    assert(first !== null);
    assertStringIncludes(first, `${dir}/x.toml:1: not valid TOML`);
    assert(first.endsWith("see runbook.md#grants-invalid"), first);
    assertEquals(
      reporter.next(await loadGrants(dir, options)),
      null,
      "the same set is not repeated",
    );
    await Deno.writeTextFile(`${dir}/y.toml`, "mode = 1");
    const second = reporter.next(await loadGrants(dir, options));
    assert(second !== null && second.includes("y.toml"), "a different set is reported");
    await Deno.remove(`${dir}/x.toml`);
    await Deno.remove(`${dir}/y.toml`);
    assertEquals(reporter.next(await loadGrants(dir, options)), null);
    await Deno.writeTextFile(`${dir}/x.toml`, "tool = ");
    assertEquals(
      reporter.next(await loadGrants(dir, options)),
      first,
      "reported again after a fix",
    );
  });
});

Deno.test("an edit within the same second at the same size, in place, applies to the next load, as do an added and a removed file", async () => {
  await withGrantsDir(async (dir) => {
    const file = `${dir}/notes-read.toml`;
    await Deno.writeTextFile(file, NOTES_READ);
    assertEquals(await outcomeOf(dir), "allowed");
    const before = await Deno.stat(file);
    // "auto" and "deny" are the same length: the file keeps its size and its inode.
    const denying = NOTES_READ.replace('mode = "auto"', 'mode = "deny"');
    const handle = await Deno.open(file, { write: true });
    await handle.write(new TextEncoder().encode(denying));
    handle.close();
    const after = await Deno.stat(file);
    assertEquals(after.size, before.size);
    assertEquals(after.ino, before.ino);
    assert(
      Math.floor(after.mtime!.getTime() / 1000) - Math.floor(before.mtime!.getTime() / 1000) <= 1,
      "the edit is within a second of the first write",
    );
    assertEquals(await outcomeOf(dir), "denied denied_by_grant");
    await Deno.writeTextFile(file, NOTES_READ);
    assertEquals(await outcomeOf(dir), "allowed");
    await Deno.writeTextFile(`${dir}/notes-deny.toml`, denying);
    assertEquals(await outcomeOf(dir), "denied denied_by_grant");
    await Deno.remove(`${dir}/notes-deny.toml`);
    assertEquals(await outcomeOf(dir), "allowed");
    await Deno.writeTextFile(file, NOTES_READ.replace('mode = "auto"', 'mode = "oops"'));
    assertEquals(await outcomeOf(dir), "denied grants_invalid");
  });
});

Deno.test("a grant loaded twice from the same bytes is the same grant, and its hash is of the bytes read", async () => {
  await withGrantsDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/notes-read.toml`, NOTES_READ);
    const first = await loadGrants(dir, options);
    const second = await loadGrants(dir, options);
    assert(first.ok && second.ok);
    assertEquals(second.grants.grants, first.grants.grants);
    assert(Object.isFrozen(second.grants.grants[0]), "a remembered grant cannot be changed");
    const other = NOTES_READ.replace("/home/kyle/notes", "/home/kyle/notez");
    await Deno.writeTextFile(`${dir}/notes-read.toml`, other);
    const third = await loadGrants(dir, options);
    assert(third.ok);
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(other)),
    );
    const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
    assertEquals(third.grants.grants[0].sha256, hex);
    assertEquals(third.grants.grants[0].paths, ["/home/kyle/notez"]);
  });
});
