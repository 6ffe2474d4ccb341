/**
 * The forms a secret can take in text that leaves the core: as is, JSON-escaped, hex (either case),
 * base64 and base64url at each of the three byte alignments (so a value inside a longer encoded text
 * is found too), and URL-encoded (encodeURIComponent, form encoding, every byte escaped).
 */
import { Buffer } from "node:buffer";

/** The shortest encoded form kept: shorter ones would match ordinary text by chance. */
const MIN_FORM_LENGTH = 8;

/** Every distinct form of `value` to look for, longest first. */
export function formsOf(value: string): string[] {
  const bytes = new TextEncoder().encode(value);
  const forms = new Set<string>([value]);
  forms.add(JSON.stringify(value).slice(1, -1));
  const hex = Buffer.from(bytes).toString("hex");
  forms.add(hex);
  forms.add(hex.toUpperCase());
  for (const form of base64Cores(bytes)) forms.add(form);
  const component = encodeURIComponent(value);
  forms.add(component);
  forms.add(lowerEscapes(component));
  forms.add(component.replaceAll("%20", "+"));
  const everyByte = [...bytes].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`)
    .join("");
  forms.add(everyByte);
  forms.add(everyByte.toLowerCase());
  return [...forms].filter((form) => form.length >= MIN_FORM_LENGTH)
    .sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
}

/**
 * The base64 and base64url characters that depend only on the value's bytes, for each of the three
 * offsets at which the value can start inside a longer encoded text.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const encoded = Buffer.from(padded).toString("base64");
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6); // exclusive: chars wholly inside
    const core = encoded.slice(first, end);
    out.push(core, core.replaceAll("+", "-").replaceAll("/", "_"));
    if (offset === 0) {
      // The whole encoding, padding included, as a tool would print it on its own.
      out.push(encoded, encoded.replaceAll("+", "-").replaceAll("/", "_"));
    }
  }
  return out;
}

function lowerEscapes(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}
