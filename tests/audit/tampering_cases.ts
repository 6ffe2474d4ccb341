/**
 * The tampering suite (docs/audit.md#what-gurt-audit-verify-checks). Each case damages the latest
 * file (DAY2) of the standard fixture, saying which line it changes and which line must fail. DAY2
 * holds seq 5 to 12 on its lines 1 to 8.
 */
import { DAY1, DAY2, lineHash, readLines, rechain, standardLog, writeLines } from "./helpers.ts";
import { withHome } from "../kit/mod.ts";

/** One way to damage a log, and where the verifier must say the chain breaks. */
export interface TamperCase {
  name: string;
  damage(home: string): Promise<void>;
  file: string;
  line: number;
  what: string;
}

export const TAMPER_CASES: TamperCase[] = [
  {
    // The byte is inside a JSON string, so line 4 still parses and chains from line 3: the
    // change shows at line 5, whose prev no longer is line 4's hash.
    name: "a changed byte in a middle line (the first byte of line 4's call id) fails at line 5",
    async damage(home) {
      const lines = await readLines(home, DAY2);
      const at = lines[3].indexOf('"call":"') + '"call":"'.length;
      lines[3] = `${lines[3].slice(0, at)}X${lines[3].slice(at + 1)}`;
      await writeLines(home, DAY2, lines);
    },
    file: DAY2,
    line: 5,
    what: "prev is not the hash of the line before",
  },
  {
    name: "a deleted line (line 4, seq 8) fails at line 4, now seq 9",
    async damage(home) {
      const lines = await readLines(home, DAY2);
      lines.splice(3, 1);
      await writeLines(home, DAY2, lines);
    },
    file: DAY2,
    line: 4,
    what: "seq is 9, expected 8",
  },
  {
    name: "two lines swapped (lines 4 and 5) fail at line 4",
    async damage(home) {
      const lines = await readLines(home, DAY2);
      [lines[3], lines[4]] = [lines[4], lines[3]];
      await writeLines(home, DAY2, lines);
    },
    file: DAY2,
    line: 4,
    what: "seq is 9, expected 8",
  },
  {
    // Every prev after the gap is rebuilt, so the seq is the only thing wrong.
    name: "a seq gap (lines 4 to 8 renumbered from 9, prevs rebuilt) fails at line 4",
    async damage(home) {
      const lines = await readLines(home, DAY2);
      const renumbered = lines.map((line, i) =>
        i < 3 ? line : line.replace(/^\{"seq":(\d+),/, (_, seq) => `{"seq":${Number(seq) + 1},`)
      );
      await writeLines(home, DAY2, rechain(renumbered, 3, lineHash(lines[2])));
    },
    file: DAY2,
    line: 4,
    what: "seq is 9, expected 8",
  },
  {
    // DAY2 of another log whose DAY1 holds other events: same seqs, but line 1's prev differs.
    name:
      "a file that does not chain from the one before (DAY2 of another log) fails at its line 1",
    async damage(home) {
      await withHome(async (other) => {
        await standardLog(other, 100);
        await writeLines(home, DAY2, await readLines(other, DAY2));
        const ours = await readLines(home, DAY1);
        const theirs = await readLines(other, DAY1);
        if (ours.join() === theirs.join()) throw new Error("the two logs must differ on DAY1");
      }, { prefix: "gurt-audit-other-" });
    },
    file: DAY2,
    line: 1,
    what: "the file does not chain from the last line of the file before it",
  },
  {
    name: "a middle line cut short (line 4 cut to half, newline kept) fails at line 4",
    async damage(home) {
      const lines = await readLines(home, DAY2);
      lines[3] = lines[3].slice(0, Math.floor(lines[3].length / 2));
      await writeLines(home, DAY2, lines);
    },
    file: DAY2,
    line: 4,
    what: "the line is not a JSON text",
  },
];
