/**
 * `gurt grants check` and `gurt grants explain` as the owner runs them: the real command as a
 * child process, on a temporary box home.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { NOTES_READ } from "../policy/helpers.ts";
import { gurt, type GurtRun, withHome } from "../kit/mod.ts";

/** Runs `gurt --home HOME ARGS…`. */
function gurtIn(home: string, ...args: string[]): Promise<GurtRun> {
  return gurt(["--home", home, ...args]);
}

/** Runs `gurt --home HOME grants explain read_file ARGS…`. */
function explainRead(home: string, ...args: string[]): Promise<GurtRun> {
  return gurtIn(home, "grants", "explain", "read_file", ...args);
}

/** Runs `work` on a fresh home whose grants folder holds `files` (file name → text). */
function withGrants(
  files: Record<string, string>,
  work: (home: string) => Promise<void>,
): Promise<void> {
  const inGrants = Object.entries(files).map(([name, text]) => [`grants/${name}`, text]);
  return withHome(work, { ...HOME, dirs: ["grants"], files: Object.fromEntries(inGrants) });
}

const HOME = { prefix: "gurt-grants-cli-" };

/** The time the explain tests decide at. */
const AT = ["--at", "2026-12-01T00:00:00Z"];

const ASK_SPEND = `tool = "example.spend"
mode = "ask"
max_taint = "private"
result_class = "public"
`;

Deno.test("gurt grants check prints grants: ok and exits 0 for the seed's example grant", async () => {
  await withGrants({ "notes-read.toml": NOTES_READ, "spend.toml": ASK_SPEND }, async (home) => {
    const run = await gurtIn(home, "grants", "check");
    // The seed's /home/kyle/notes is on no test machine: said as a note, which fails nothing.
    const note = `${home}/grants/notes-read.toml:10: note: constraints.paths: ` +
      `"/home/kyle/notes" does not exist on this box; the grant matches nothing there until it does\n`;
    assertEquals(run, { code: 0, stdout: `${note}grants: ok\n`, stderr: "" });
  });
});

Deno.test("gurt grants check prints each problem as <file>:<line>: <problem> and exits 1", async () => {
  const bad = NOTES_READ.replace('mode = "auto"', 'mode = "allow"').replace(
    '["/home/kyle/notes"]',
    '["/"]',
  );
  await withGrants({ "notes-read.toml": NOTES_READ, "Bad.toml": bad }, async (home) => {
    const run = await gurtIn(home, "grants", "check");
    assertEquals(run.code, 1);
    const file = `${home}/grants/Bad.toml`;
    assertEquals(run.stdout.split("\n").slice(0, 2), [
      `${file}: the file name "Bad.toml" is not a grant id: it must be 1 to 64 characters of a-z, 0-9 and - followed by .toml`,
      `${file}:3: mode: must be one of auto, ask, deny`,
    ]);
    assertStringIncludes(run.stdout, "see runbook.md#grants-invalid");
  });
});

Deno.test("gurt grants check fails when the grants directory is missing", async () => {
  await withHome(async (home) => {
    const run = await gurtIn(home, "grants", "check");
    assertEquals(run.code, 1);
    assertStringIncludes(run.stdout, `${home}/grants: the grants directory does not exist`);
  }, HOME);
});

Deno.test("gurt grants explain allows a read under notes-read's path and exits 0", async () => {
  await withGrants({ "notes-read.toml": NOTES_READ }, async (home) => {
    const run = await explainRead(home, '{"path": "/home/kyle/notes/a.md"}', ...AT);
    assertEquals(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split("\n");
    assertEquals(lines[0], "allowed");
    assert(/^grant: notes-read \(sha256 [0-9a-f]{64}\)$/.test(lines[1]), lines[1]);
    assertEquals(lines.slice(2), [
      "label: private, trusted",
      "matched path: /home/kyle/notes",
      'arguments: {"path":"/home/kyle/notes/a.md"}',
      "candidates for read_file at taint private, trusted, at 2026-12-01T00:00:00.000Z:",
      "  notes-read (auto): wins through /home/kyle/notes",
    ]);
  });
});

Deno.test("gurt grants explain says denied no_grant for /home/kyle/notes2/a.md and exits 1", async () => {
  await withGrants({ "notes-read.toml": NOTES_READ }, async (home) => {
    const run = await explainRead(home, '{"path": "/home/kyle/notes2/a.md"}', ...AT);
    assertEquals(run.code, 1);
    assertEquals(run.stdout.trimEnd().split("\n"), [
      "denied no_grant",
      "grant: none",
      "label: none",
      "candidates for read_file at taint private, trusted, at 2026-12-01T00:00:00.000Z:",
      "  notes-read (auto): ruled out: its constraints do not cover the arguments",
    ]);
  });
});

Deno.test("gurt grants explain reports expiry with --at, taint with --taint, and ask with exit 2", async () => {
  const privateOnly = NOTES_READ.replace('max_taint = "secret"', 'max_taint = "private"');
  await withGrants({ "notes-read.toml": privateOnly, "spend.toml": ASK_SPEND }, async (home) => {
    const read = '{"path": "/home/kyle/notes/a.md"}';
    const expired = await explainRead(home, read, "--at", "2027-01-01T00:00:00Z");
    assertEquals(expired.code, 1);
    assertEquals(expired.stdout.split("\n")[0], "denied grant_expired");
    assertStringIncludes(expired.stdout, "notes-read (auto): ruled out: it expired at 2027-01-01");
    const tainted = await explainRead(home, read, "--taint", "secret", ...AT);
    assertEquals(tainted.code, 1);
    assertEquals(tainted.stdout.split("\n")[0], "denied taint_too_high");
    assertStringIncludes(tainted.stdout, "the taint secret is above its max_taint private");
    const ask = await gurtIn(
      home,
      "grants",
      "explain",
      "example.spend",
      '{"amount": 3}',
      "--untrusted",
    );
    assertEquals(ask.code, 2, ask.stderr);
    assertEquals(ask.stdout.split("\n").slice(0, 2), ["ask", "why: grant"]);
    assertStringIncludes(ask.stdout, "label: public, trusted");
    assertStringIncludes(ask.stdout, "at taint private, untrusted");
  });
});

Deno.test("gurt grants explain denies with grants_invalid while a grant file is invalid", async () => {
  await withGrants({ "notes-read.toml": NOTES_READ, "x.toml": "tool = " }, async (home) => {
    const run = await explainRead(home, '{"path": "/home/kyle/notes/a"}');
    assertEquals(run.code, 1);
    assertEquals(run.stdout.split("\n")[0], "denied grants_invalid");
    assertStringIncludes(run.stdout, `${home}/grants/x.toml:1: not valid TOML`);
    assertStringIncludes(run.stdout, "see runbook.md#grants-invalid");
  });
});

Deno.test("gurt grants explain refuses arguments that are not JSON, and a public taint", async () => {
  await withGrants({ "notes-read.toml": NOTES_READ }, async (home) => {
    const notJson = await explainRead(home, "{path: /a}");
    assertEquals(notJson.code, 1);
    assertStringIncludes(notJson.stderr, "the arguments are not valid JSON");
    const badTaint = await explainRead(home, "{}", "--taint", "public");
    assertEquals(badTaint.code, 1);
    assertStringIncludes(badTaint.stderr, "--taint must be private or secret");
    const invalid = await explainRead(home, '{"path": "a"}');
    assertEquals(invalid.code, 1);
    assertEquals(invalid.stdout.split("\n")[0], "denied invalid_arguments");
    assertStringIncludes(invalid.stdout, "arguments: path is not absolute");
  });
});

Deno.test("gurt grants explain writes nothing in the box home", async () => {
  await withGrants({ "notes-read.toml": NOTES_READ }, async (home) => {
    await explainRead(home, '{"path": "/home/kyle/notes/a.md"}');
    const entries = [...Deno.readDirSync(home)].map((e) => e.name);
    assertEquals(entries, ["grants"]);
    assertEquals([...Deno.readDirSync(`${home}/grants`)].map((e) => e.name), ["notes-read.toml"]);
  });
});

Deno.test("gurt grants check gives 'did you mean result_class' for a near-miss field, and does not first call result_class missing", async () => {
  const typo = ASK_SPEND.replace("result_class", "resultclass");
  const constraint = NOTES_READ.replace("paths =", "path =");
  await withGrants({ "spend.toml": typo, "notes-read.toml": constraint }, async (home) => {
    const run = await gurtIn(home, "grants", "check");
    assertEquals(run.code, 1);
    assertStringIncludes(
      run.stdout,
      `${home}/grants/spend.toml:4: resultclass: unknown field; did you mean result_class?`,
    );
    assertStringIncludes(run.stdout, "constraints.path: unknown field; did you mean paths?");
    assert(!run.stdout.includes("result_class: is required"), run.stdout);
    assert(!run.stdout.includes("constraints.paths"), run.stdout);
    // A field far from every known one is still only unknown.
    const far = ASK_SPEND.replace('result_class = "public"', 'result_class = "public"\ncolour = 1');
    await Deno.writeTextFile(`${home}/grants/spend.toml`, far);
    await Deno.writeTextFile(`${home}/grants/notes-read.toml`, NOTES_READ);
    const again = await gurtIn(home, "grants", "check");
    assertStringIncludes(again.stdout, "spend.toml:5: colour: unknown field\n");
  });
});

Deno.test("gurt grants check reports grant paths that do not exist on this box, and still passes", async () => {
  const scratch = await Deno.makeTempDir({ prefix: "gurt-grant-path-" });
  const gone = `${scratch}/no-such-folder`;
  const text = NOTES_READ.replace('["/home/kyle/notes"]', JSON.stringify([scratch, gone]));
  try {
    await withGrants({ "notes-read.toml": text }, async (home) => {
      const run = await gurtIn(home, "grants", "check");
      assertEquals(run.code, 0, run.stdout);
      const notes = run.stdout.split("\n").filter((line) => line.includes("does not exist"));
      assertEquals(notes, [
        `${home}/grants/notes-read.toml:10: note: constraints.paths: ${
          JSON.stringify(gone)
        } does not exist on this box; the grant matches nothing there until it does`,
      ]);
      assertStringIncludes(run.stdout, "grants: ok");
    });
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
});

Deno.test("gurt grants check checks the credential rules too: their ids when valid, each problem and exit 1 when not", async () => {
  const rule =
    'host = "github.com"\nsecret = "GITHUB_TOKEN"\nbasic = { user = "x-access-token" }\n';
  await withHome(async (home) => {
    const good = await gurtIn(home, "grants", "check");
    assertEquals(good, { code: 0, stdout: "grants: ok\ncredentials: ok (github)\n", stderr: "" });
    await Deno.writeTextFile(`${home}/credentials/bad.toml`, 'host = "github.com"\nsecret = "x"\n');
    const bad = await gurtIn(home, "grants", "check");
    assertEquals(bad.code, 1, bad.stdout + bad.stderr);
    assertStringIncludes(bad.stdout, `${home}/credentials/bad.toml:2: secret`);
    assertStringIncludes(bad.stdout, "every credentialed request is refused");
    assert(!bad.stdout.includes("credentials: ok"));
  }, { ...HOME, dirs: ["grants", "credentials"], files: { "credentials/github.toml": rule } });
});
