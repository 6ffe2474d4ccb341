/**
 * A bound on how many JSON objects and arrays a request body holds, found before it is parsed: a
 * body of millions of `{}`s costs the core's own event loop seconds and a gigabyte to parse, walk
 * and write again, while a model request of that size is text. Pure.
 */

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether `bytes`, read as JSON text, opens more than `most` objects and arrays. Brackets inside
 * strings are not counted; the scan stops as soon as the bound is passed. Text that is not JSON is
 * counted all the same (the parse refuses it after).
 */
export function moreContainersThan(bytes: Uint8Array, most: number): boolean {
  let count = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++count > most) return true;
    }
  }
  return false;
}
