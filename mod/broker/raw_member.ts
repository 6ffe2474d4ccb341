/**
 * The raw text of one member of a JSON object body, exactly as received: the audit log keeps a
 * call's arguments in full as the task sent them (docs/audit.md#decision-a-call-or-an-ask-decided),
 * not the value serialised again, in which "\u002fetc" and "/etc" would look alike.
 */
import { parseTree } from "jsonc-parser";

/**
 * The text of the top-level member `name` of the JSON object `text`, or null if it has none. Where
 * a name repeats, the last one, as JSON.parse takes it. Call it only on text JSON.parse accepted.
 */
export function rawMember(text: string, name: string): string | null {
  const root = parseTree(text, [], { disallowComments: true, allowTrailingComma: false });
  if (root === undefined || root.type !== "object") return null;
  let found: string | null = null;
  for (const property of root.children ?? []) {
    const [key, value] = property.children ?? [];
    if (key?.value === name && value !== undefined) {
      found = text.slice(value.offset, value.offset + value.length);
    }
  }
  return found;
}
