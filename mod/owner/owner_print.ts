/**
 * How the CLI role prints what the owner reads: on a terminal, folded into the terminal's rows by
 * gurt (terminalRows), so a task's long text cannot put a copy of a core line at the start of a row
 * the terminal wrapped to; into a pipe or a file, as it is.
 */
import { terminalRows } from "../owner-text/mod.ts";

/** The width assumed of a terminal whose size cannot be read, or reads as 0. */
const ASSUMED_COLUMNS = 80;

function columns(): number {
  try {
    // Some pseudo-terminals report no size at all (0 columns).
    const { columns } = Deno.consoleSize();
    return columns > 0 ? columns : ASSUMED_COLUMNS;
  } catch {
    return ASSUMED_COLUMNS;
  }
}

/** Prints `text` (one or more lines) on standard output, folded when it is a terminal. */
export function printOwner(text: string): void {
  // The size is read at each print: the owner may have resized the window meanwhile.
  console.log(Deno.stdout.isTerminal() ? terminalRows(text, columns()) : text);
}
