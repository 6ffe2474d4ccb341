/**
 * Text that came from a task or a model is printed as data (docs/threat-model.md#the-owners-view).
 * Control characters and the invisible and direction-changing characters become \uXXXX (four
 * lowercase hex digits), so nothing a model wrote can move the cursor, change colours, or make a
 * path look like another.
 */

/** The ranges escaped, written as code points so no control character is in the source. */
const RANGES: [number, number][] = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2069],
  [0xfeff, 0xfeff],
];

function characterClass(ranges: [number, number][]): RegExp {
  const u = (code: number) => `\\u${code.toString(16).padStart(4, "0")}`;
  return new RegExp(`[${ranges.map(([a, b]) => `${u(a)}-${u(b)}`).join("")}]`, "g");
}

const ESCAPED = characterClass(RANGES);
/** The same without newline (0x0a) and tab (0x09). */
const ESCAPED_KEEPING_LINES = characterClass([[0x00, 0x08], [0x0b, 0x1f], ...RANGES.slice(1)]);

function hex(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** Escapes every listed character, newline and tab included (for arguments). */
export function escapeArguments(text: string): string {
  return text.replace(ESCAPED, hex);
}

/** Escapes every listed character except newline and tab (for model text). */
export function escapeModelText(text: string): string {
  return text.replace(ESCAPED_KEEPING_LINES, hex);
}
