/**
 * The vault file's text: `NAME=value` lines, with `# set NAME <iso time>` comment lines that keep
 * when each key was set. Blank lines and other comments are kept where they are. A value is the
 * rest of its line, byte for byte: no quotes are removed and no escapes are read.
 */
import { isKeyName } from "./names.ts";

/** One line of the vault file, as read. */
export type VaultLine =
  | { kind: "key"; name: string; value: string }
  | { kind: "other"; text: string };

/** The vault file, parsed: its lines in order and the set times its comments record. */
export interface VaultDocument {
  lines: VaultLine[];
  setTimes: Map<string, string>;
}

const SET_COMMENT = /^# set ([A-Z][A-Z0-9_]*) (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z)$/;

/** Parses the vault text; throws a sentence naming the file and line (never its content). */
export function parseVaultText(text: string, file: string): VaultDocument {
  const lines: VaultLine[] = [];
  const setTimes = new Map<string, string>();
  const seen = new Map<string, number>();
  const raw = text.split("\n");
  if (raw.at(-1) === "") raw.pop();
  for (let i = 0; i < raw.length; i++) {
    const line = raw[i].endsWith("\r") ? raw[i].slice(0, -1) : raw[i];
    const setComment = SET_COMMENT.exec(line);
    if (setComment !== null) {
      setTimes.set(setComment[1], setComment[2]);
      continue;
    }
    if (line.trim() === "" || line.trimStart().startsWith("#")) {
      lines.push({ kind: "other", text: line });
      continue;
    }
    const equals = line.indexOf("=");
    const name = equals < 0 ? "" : line.slice(0, equals);
    if (!isKeyName(name)) {
      throw new Error(
        `${file}:${i + 1}: this line is not NAME=value with a name such as STRIPE_SECRET_KEY ` +
          `(upper-case letters, digits and _); its content is not shown; see runbook.md#vault-format`,
      );
    }
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      throw new Error(
        `${file}:${
          i + 1
        }: the key ${name} is already set at line ${earlier}; keep one of the two ` +
          `lines; see runbook.md#vault-format`,
      );
    }
    seen.set(name, i + 1);
    lines.push({ kind: "key", name, value: line.slice(equals + 1) });
  }
  return { lines, setTimes };
}

/** The document's text: each key line preceded by its set comment, when it has a set time. */
export function renderVaultText(document: VaultDocument): string {
  let out = "";
  for (const line of document.lines) {
    if (line.kind === "other") {
      out += `${line.text}\n`;
      continue;
    }
    const time = document.setTimes.get(line.name);
    if (time !== undefined) out += `# set ${line.name} ${time}\n`;
    out += `${line.name}=${line.value}\n`;
  }
  return out;
}

/** A copy of the document with `name` set to `value` at `time`: in place if present, else last. */
export function withKey(
  document: VaultDocument,
  entry: { name: string; value: string; time: string },
): VaultDocument {
  const line: VaultLine = { kind: "key", name: entry.name, value: entry.value };
  const lines = document.lines.map((l) => (l.kind === "key" && l.name === entry.name ? line : l));
  if (!document.lines.some((l) => l.kind === "key" && l.name === entry.name)) lines.push(line);
  const setTimes = new Map(document.setTimes);
  setTimes.set(entry.name, entry.time);
  return { lines, setTimes };
}

/** A copy of the document without the key `name`. */
export function withoutKey(document: VaultDocument, name: string): VaultDocument {
  const setTimes = new Map(document.setTimes);
  setTimes.delete(name);
  return {
    lines: document.lines.filter((l) => !(l.kind === "key" && l.name === name)),
    setTimes,
  };
}

/** The keys of the document, name to value, in file order. */
export function keysOf(document: VaultDocument): Map<string, string> {
  const keys = new Map<string, string>();
  for (const line of document.lines) if (line.kind === "key") keys.set(line.name, line.value);
  return keys;
}
