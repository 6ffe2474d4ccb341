/**
 * Key names to X keysyms, the way xdotool reads them: a chord such as `ctrl+shift+t` is a list of
 * keysyms pressed in order and released in reverse. Typed characters map to their keysym. Pure.
 */
// @ts-types="./x11_types.d.ts"
import x11 from "x11";

/** Short names for the modifiers, as xdotool accepts them. */
const ALIASES: Record<string, string> = {
  ctrl: "Control_L",
  control: "Control_L",
  shift: "Shift_L",
  alt: "Alt_L",
  meta: "Meta_L",
  super: "Super_L",
  win: "Super_L",
  cmd: "Super_L",
  enter: "Return",
  return: "Return",
  esc: "Escape",
  escape: "Escape",
  tab: "Tab",
  backspace: "BackSpace",
  delete: "Delete",
  del: "Delete",
  space: "space",
  pageup: "Page_Up",
  pagedown: "Page_Down",
  up: "Up",
  down: "Down",
  left: "Left",
  right: "Right",
  home: "Home",
  end: "End",
  insert: "Insert",
};

/** The keysyms of the modifier keys, whose state a tap clears. */
export const MODIFIER_KEYSYMS: number[] = [
  0xffe1, // Shift_L
  0xffe2, // Shift_R
  0xffe3, // Control_L
  0xffe4, // Control_R
  0xffe7, // Meta_L
  0xffe8, // Meta_R
  0xffe9, // Alt_L
  0xffea, // Alt_R
  0xffeb, // Super_L
  0xffec, // Super_R
  0xfe03, // ISO_Level3_Shift
];

/** The keysym of Shift_L, pressed for a character on the shifted level. */
export const SHIFT_L = 0xffe1;

let table: Map<string, number> | undefined;

function keysymTable(): Map<string, number> {
  if (table) return table;
  table = new Map();
  for (const [name, entry] of Object.entries(x11.keySyms)) {
    if (name.startsWith("XK_")) table.set(name.slice(3), entry.code);
  }
  return table;
}

/** The keysym of one key name (`Return`, `a`, `F5`, `ctrl`), or undefined if unknown. */
export function keysymOf(name: string): number | undefined {
  const alias = ALIASES[name.toLowerCase()];
  const known = keysymTable().get(alias ?? name);
  if (known !== undefined) return known;
  if ([...name].length === 1) return keysymOfChar(name);
  return undefined;
}

/** Parses a chord (`ctrl+l`, `Return`, `shift+Tab`) into keysyms; throws a sentence if bad. */
export function parseChord(key: string): number[] {
  if (key.length === 0 || key.length > 64) {
    throw new Error("key must be 1 to 64 characters, such as Return or ctrl+l");
  }
  if (/[\s;]/.test(key)) {
    throw new Error(`key ${JSON.stringify(key)} contains whitespace or ";": name one chord`);
  }
  // A lone "+" is the plus key; "ctrl++" is ctrl and plus.
  const parts = key === "+"
    ? ["+"]
    : key.endsWith("++")
    ? [...key.slice(0, -2).split("+"), "+"]
    : key.split("+");
  return parts.map((part) => {
    const keysym = part.length === 0 ? undefined : keysymOf(part);
    if (keysym === undefined) {
      throw new Error(
        `key ${JSON.stringify(key)}: ${
          JSON.stringify(part)
        } is not an X keysym name (try Return, Tab, ctrl, shift, a, F5)`,
      );
    }
    return keysym;
  });
}

/** The keysym a typed character produces: Latin-1 as is, other Unicode as 0x01000000 + code. */
export function keysymOfChar(char: string): number {
  if (char === "\n" || char === "\r") return 0xff0d; // Return
  if (char === "\t") return 0xff09; // Tab
  if (char === "\b") return 0xff08; // BackSpace
  const code = char.codePointAt(0) ?? 0;
  if ((code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff)) return code;
  return 0x01000000 + code;
}
