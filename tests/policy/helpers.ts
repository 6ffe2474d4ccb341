/** Test helpers: grant files written as TOML text, and grant sets built from them. */
import {
  buildGrantSet,
  type DataClass,
  type DecideOptions,
  type GrantSet,
  type Mode,
} from "../../mod/policy/mod.ts";
import { standardRegistry } from "../../mod/tools/mod.ts";

/** The app tools of a standard box, as the core passes them. */
const APP_TOOLS = standardRegistry().appToolNames();

/** The fields of one grant, as the owner writes them. */
export interface GrantSpec {
  tool: string;
  mode?: Mode;
  max_taint?: DataClass;
  result_class?: DataClass;
  untrusted?: boolean;
  expires?: string;
  paths?: readonly string[];
  hosts?: readonly string[];
}

/** The TOML text of a grant file. */
export function grantToml(spec: GrantSpec): string {
  const lines = [
    `tool = ${JSON.stringify(spec.tool)}`,
    `mode = ${JSON.stringify(spec.mode ?? "auto")}`,
    `max_taint = ${JSON.stringify(spec.max_taint ?? "secret")}`,
    `result_class = ${JSON.stringify(spec.result_class ?? "private")}`,
    `untrusted = ${spec.untrusted ?? false}`,
  ];
  if (spec.expires !== undefined) lines.push(`expires = ${JSON.stringify(spec.expires)}`);
  lines.push("", "[constraints]");
  if (spec.paths !== undefined) lines.push(`paths = ${JSON.stringify(spec.paths)}`);
  if (spec.hosts !== undefined) lines.push(`hosts = ${JSON.stringify(spec.hosts)}`);
  return lines.join("\n") + "\n";
}

/** A valid grant set from grant specs keyed by id; throws with the problems if it is invalid. */
export function grantSet(specs: Record<string, GrantSpec>): GrantSet {
  const encoder = new TextEncoder();
  const files = Object.entries(specs).map(([id, spec]) => ({
    file: `grants/${id}.toml`,
    bytes: encoder.encode(grantToml(spec)),
  }));
  const load = buildGrantSet(files, { appTools: APP_TOOLS });
  if (!load.ok) throw new Error(`test grants are invalid: ${JSON.stringify(load.problems)}`);
  return load.grants;
}

/** The time tests decide at unless they say otherwise. */
export const NOW = new Date("2026-10-01T12:00:00.000Z");

/** Decide options at private, trusted, at NOW. */
export function at(
  taint: DataClass = "private",
  extra: Partial<DecideOptions> = {},
): DecideOptions {
  return { state: { taint, untrusted: false }, now: NOW, ...extra };
}

/** The seed's example grant, grants/notes-read.toml, byte for byte. */
export const NOTES_READ = `# grants/notes-read.toml
tool = "read_file"
mode = "auto"
max_taint = "secret"
result_class = "private"
untrusted = false
expires = "2027-01-01T00:00:00.000Z"

[constraints]
paths = ["/home/kyle/notes"]
`;
