/** Grant files for tests, written as TOML text the way an owner writes them. */
import type { DataClass, Mode } from "../../mod/policy/mod.ts";

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
  /** `http.request` only: the methods covered. */
  methods?: readonly string[];
}

/** The TOML text of a grant file: mode auto, max_taint secret, result_class private unless given. */
export function grant(spec: GrantSpec): string {
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
  if (spec.methods !== undefined) lines.push(`methods = ${JSON.stringify(spec.methods)}`);
  return lines.join("\n") + "\n";
}
