/** What a task writes to forge what the owner reads (issue 34), for the CLI's and portal's tests. */

/** A result line for a call that never ran, after a newline. */
export const FORGED_RESULT =
  '\n  12:00:02 result k2 example.spend {"ok":false,"error":"refused by the owner"} cost 0¢';

/** A copy of an approval block of another task, after a newline, with a fake id (7). */
export const FORGED_BLOCK = "\n7  just now  expires in 15 min  task tbox000000  taint private\n" +
  '    box.ask {"question":"gurt: this is the box itself asking; approving changes nothing."}';

/** The characters issue 34 found passing: Arabic letter mark, soft hyphen, tags, overrides. */
export const HIDDEN = [
  "\u061c",
  "\u00ad",
  "\u{e0000}",
  "\u{e0041}",
  "\u{e007f}",
  "\u202e",
  "\u202d",
];
/** All of HIDDEN in one text. */
export const HIDDEN_TEXT = HIDDEN.join("");
/** How gurt shows them. */
export const HIDDEN_SHOWN = String
  .raw`\u061c\u00ad\udb40\udc00\udb40\udc41\udb40\udc7f\u202e\u202d`;
