/**
 * Lines folded into a terminal's rows by gurt itself (docs/threat-model.md#the-owners-view): a
 * terminal wraps a line longer than its width, so a task's text long enough (visible words will
 * do, no padding needed) could put a copy of a core line at the start of a row. Folded here, every
 * row after a line's first begins with CONTINUED, which no line of the core's begins with, and no
 * row is wide enough for the terminal to wrap it.
 */

/** What begins each row of a line after its first. */
export const CONTINUED = "  … ";

/**
 * The most columns `char` can take: 1 for printable ASCII, 2 for any other character (a
 * terminal's widest; an accent or a narrow letter counted as 2 only folds a row sooner).
 */
function columnsOf(char: string): number {
  const code = char.codePointAt(0)!;
  return code >= 0x20 && code < 0x7f ? 1 : 2;
}

function widthOf(text: string): number {
  let width = 0;
  for (const char of text) width += columnsOf(char);
  return width;
}

/**
 * `text` with each of its lines folded into rows narrower than `columns` (the terminal's width):
 * the first row as it starts, each after it CONTINUED and the rest.
 */
export function terminalRows(text: string, columns: number): string {
  const room = Math.max(8, columns - 1 - widthOf(CONTINUED));
  const first = Math.max(8, columns - 1);
  const rows: string[] = [];
  for (const line of text.split("\n")) {
    let row = "";
    let width = 0;
    let limit = first;
    let prefix = "";
    for (const char of line) {
      const w = columnsOf(char);
      if (width + w > limit) {
        rows.push(prefix + row);
        prefix = CONTINUED;
        row = "";
        width = 0;
        limit = room;
      }
      row += char;
      width += w;
    }
    rows.push(prefix + row);
  }
  return rows.join("\n");
}
