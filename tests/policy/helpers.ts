/** Test helpers: grant sets built from grant files (tests/kit/grant.ts), decided at a fixed time. */
import {
  buildGrantSet,
  type DataClass,
  type DecideOptions,
  type GrantSet,
} from "../../mod/policy/mod.ts";
import { standardRegistry } from "../../mod/tools/mod.ts";
import { grant, type GrantSpec } from "../kit/mod.ts";

/** The app tools of a standard box, as the core passes them. */
const APP_TOOLS = standardRegistry().appToolNames();

/** A valid grant set from grant specs keyed by id; throws with the problems if it is invalid. */
export function grantSet(specs: Record<string, GrantSpec>): GrantSet {
  const encoder = new TextEncoder();
  const files = Object.entries(specs).map(([id, spec]) => ({
    file: `grants/${id}.toml`,
    bytes: encoder.encode(grant(spec)),
  }));
  const load = buildGrantSet(files, { appTools: APP_TOOLS });
  if (!load.ok) throw new Error(`test grants are invalid: ${JSON.stringify(load.problems)}`);
  return load.grants;
}

/** The time tests decide at unless they say otherwise. */
export const NOW = new Date("2026-10-01T12:00:00.000Z");

/** Decide options but the grants: at private, trusted, at NOW. */
export function at(
  taint: DataClass = "private",
  extra: Partial<Omit<DecideOptions, "grants">> = {},
): Omit<DecideOptions, "grants"> {
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
