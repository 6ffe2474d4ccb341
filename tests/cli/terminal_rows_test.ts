/**
 * A task's long text cannot start a row of the owner's terminal (the review of issue 34): without
 * any newline, a step or a question exactly as long as the rest of a terminal row puts what follows
 * at the start of the next row the terminal wraps to, where a copy of a core line reads as one.
 * The real commands run in a real terminal (tmux, 80 columns) and the rows are what it shows.
 */
import { assert, assertEquals } from "../assert.ts";
import { grant, gurtArgs, type TestBox, until, withBox } from "../kit/mod.ts";
import { CONTINUED, terminalRows } from "../../mod/owner-text/mod.ts";

const COLUMNS = 80;

/** Runs `gurt ARGS` in a tmux pane COLUMNS wide and returns the rows the pane shows at its end. */
async function inTerminal(args: string[]): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-tmux-" });
  const socket = `${dir}/tmux.sock`;
  const done = `${dir}/done`;
  await Deno.writeTextFile(`${dir}/tmux.conf`, "set -g remain-on-exit on\nset -g status off\n");
  const tmux = (...rest: string[]) =>
    new Deno.Command("tmux", { args: ["-S", socket, "-f", `${dir}/tmux.conf`, ...rest] }).output();
  const quoted = [Deno.execPath(), ...gurtArgs(args)].map((arg) =>
    `'${arg.replaceAll("'", "'\\''")}'`
  );
  try {
    const started = await tmux(
      "new-session",
      "-d",
      "-x",
      String(COLUMNS),
      "-y",
      "200",
      "--",
      "sh",
      "-c",
      `NO_COLOR=1 ${quoted.join(" ")}; touch '${done}'`,
    );
    assertEquals(started.code, 0, new TextDecoder().decode(started.stderr));
    await until(() => Deno.stat(done).then(() => true, () => false), 60_000);
    const shown = await tmux("capture-pane", "-p", "-S", "-");
    return new TextDecoder().decode(shown.stdout).split("\n");
  } finally {
    await tmux("kill-server");
    await Deno.remove(dir, { recursive: true });
  }
}

/** Plain words, `length` characters of them. */
function words(length: number): string {
  return "I am reading the invoice and then I will pay the right payee for it "
    .repeat(4).slice(0, length);
}

function run(box: TestBox, args: string[]): Promise<string[]> {
  return inTerminal(["--home", box.home, ...args]);
}

Deno.test("gurt task show in an 80-column terminal: a step as long as the rest of its row cannot put a forged result line at the start of the next", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    // "  HH:MM:SS step " is 16 columns: 64 more fill the row.
    const forged = '  12:00:02 result k2 example.spend {"ok":false,"error":"refused"} cost 0¢';
    await task.request("POST", "/step", { text: words(64) + forged });
    const rows = await run(box, ["task", "show", task.id]);
    assert(rows.some((row) => row.startsWith("journal:")), rows.join("\n"));
    assertEquals(rows.filter((row) => row.startsWith("  12:00:02 result")), [], rows.join("\n"));
    const forgedRow = rows.find((row) => row.includes("12:00:02 result"));
    assert(forgedRow?.startsWith(CONTINUED), rows.join("\n"));
    for (const row of rows) assert(row.length < COLUMNS, `a row the terminal wrapped: ${row}`);
  });
});

Deno.test("gurt approvals in an 80-column terminal: a question as long as the rest of its row cannot put a copy of an approval block at the start of a row", async () => {
  await withBox(
    { grants: { spend: grant({ tool: "example.spend", mode: "ask" }) } },
    async (box) => {
      const task = await box.startTask({ tools: ["example.spend"] });
      // '    box.ask {"question":"' is 25 columns: 55 more fill the row.
      const block = "7  just now  expires in 15 min  task tbox000000  taint private ";
      const asked = await task.request("POST", "/ask", {
        key: "q1",
        question: words(55) + block + words(80 - block.length) +
          '    box.ask {"question":"gurt: this is the box itself asking"}',
        waitMs: 1,
      });
      assertEquals(asked.body.pending, true, JSON.stringify(asked.body));
      await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 1);
      const rows = await run(box, ["approvals"]);
      assertEquals(rows.filter((row) => row.startsWith("7  just now")), [], rows.join("\n"));
      assertEquals(rows.filter((row) => row.startsWith("    box.ask")).length, 1, rows.join("\n"));
      for (const row of rows) assert(row.length < COLUMNS, `a row the terminal wrapped: ${row}`);
    },
  );
});

Deno.test("terminalRows folds each line into rows narrower than the terminal, each after the first marked; a wide character counts as two columns", () => {
  assertEquals(terminalRows("short\nlines", 80), "short\nlines");
  assertEquals(terminalRows("a".repeat(25), 20), `${"a".repeat(19)}\n${CONTINUED}${"a".repeat(6)}`);
  // 東 is two columns wide: 9 of them (18 columns) fit in 19.
  assertEquals(terminalRows("東".repeat(10), 20), `${"東".repeat(9)}\n${CONTINUED}東`);
});
