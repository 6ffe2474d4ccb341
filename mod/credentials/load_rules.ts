/**
 * Reads the credential rules folder, `credentials/*.toml` in the box home, every file every time
 * (docs/credentials.md#when-the-rules-are-invalid), as the grant files are read: no cache, so a
 * change applies to the next request. An absent folder is no rules; an unreadable folder or any
 * invalid file makes the whole load invalid, and the caller then refuses every credentialed
 * request.
 */
import { type CredentialProblem, type CredentialRule, parseCredentialRule } from "./rule_file.ts";

/** The rules by id, or every problem with the files, lines and fields. */
export type CredentialLoad =
  | { ok: true; rules: ReadonlyMap<string, CredentialRule> }
  | { ok: false; problems: CredentialProblem[] };

/** Loads `<dir>/*.toml` into rules by id, or every problem with the files, lines and fields. */
// deno-lint-ignore require-await
export async function loadCredentialRules(dir: string): Promise<CredentialLoad> {
  const names: string[] = [];
  try {
    // Synchronous reads, as loadGrants: a few small files, read at every credentialed request.
    for (const entry of Deno.readDirSync(dir)) {
      if (entry.name.endsWith(".toml")) names.push(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { ok: true, rules: new Map() };
    const why = `the credentials directory cannot be read: ${describe(error)}`;
    return { ok: false, problems: [{ file: dir, line: null, problem: why }] };
  }
  names.sort();
  const problems: CredentialProblem[] = [];
  const rules = new Map<string, CredentialRule>();
  for (const name of names) {
    const file = `${dir}/${name}`;
    let bytes: Uint8Array;
    try {
      bytes = Deno.readFileSync(file);
    } catch (error) {
      problems.push({ file, line: null, problem: `the file cannot be read: ${describe(error)}` });
      continue;
    }
    const parsed = parseCredentialRule({ file, content: bytes });
    if (parsed.ok) rules.set(parsed.rule.id, parsed.rule);
    else problems.push(...parsed.problems);
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, rules };
}

/** Each problem as `file:line: problem`, then the runbook pointer, as the core prints them. */
export function credentialsInvalidReport(problems: readonly CredentialProblem[]): string {
  return [
    ...problems.map((p) => `${p.line === null ? p.file : `${p.file}:${p.line}`}: ${p.problem}`),
    "credentials: the credential rules are invalid, so every credentialed request is refused; " +
    "see docs/credentials.md#when-the-rules-are-invalid",
  ].join("\n");
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
