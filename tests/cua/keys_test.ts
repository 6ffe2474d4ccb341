import { assertEquals, assertThrows } from "../assert.ts";
import { keysymOfChar, parseChord } from "../../mod/cua/keys.ts";

Deno.test("a chord is its keysyms in order, with xdotool's modifier names", () => {
  assertEquals(parseChord("ctrl+l"), [0xffe3, 0x6c]);
  assertEquals(parseChord("ctrl+shift+Tab"), [0xffe3, 0xffe1, 0xff09]);
  assertEquals(parseChord("Return"), [0xff0d]);
  assertEquals(parseChord("super"), [0xffeb]);
  assertEquals(parseChord("F5"), [0xffc2]);
  assertEquals(parseChord("ctrl++"), [0xffe3, 0x2b]);
  assertEquals(parseChord("A"), [0x41]);
});

Deno.test("whitespace, semicolons and unknown names are refused with the bad part named", () => {
  assertThrows(() => parseChord("ctrl+l Return"), Error, "whitespace");
  assertThrows(() => parseChord("a;b"), Error, '";"');
  assertThrows(() => parseChord("ctrl+nope"), Error, '"nope" is not an X keysym name');
  assertThrows(() => parseChord(""), Error, "1 to 64");
});

Deno.test("typed characters map to Latin-1 keysyms, or Unicode keysyms beyond", () => {
  assertEquals(keysymOfChar("a"), 0x61);
  assertEquals(keysymOfChar("é"), 0xe9);
  assertEquals(keysymOfChar("\n"), 0xff0d);
  assertEquals(keysymOfChar("€"), 0x010020ac);
});
