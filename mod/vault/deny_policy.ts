/**
 * The owner's per-app deny list (`gurt vault deny APP NAME`), kept in BOX_HOME/vault-policy.json as
 * `{"deny": {"<app>": ["NAME", ...]}}`, mode 0600, rewritten atomically. It holds names only.
 */
import { z } from "zod";
import { APP_NAME, KEY_NAME } from "./names.ts";
import { VaultFileError, writeVaultFile } from "./vault_file.ts";

const policySchema = z.strictObject({
  deny: z.record(z.string().regex(APP_NAME), z.array(z.string().regex(KEY_NAME))),
});

/** Which keys each app may not read. */
export type DenyList = Map<string, Set<string>>;

/** The deny list's file under the box home. */
export function policyPath(home: string): string {
  return `${home}/vault-policy.json`;
}

/** Reads the deny list; a missing file is an empty list, a damaged one refuses to start. */
export async function readDenyList(path: string): Promise<DenyList> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return new Map();
    throw new VaultFileError(
      `${path} cannot be read (${(error as Error).message}); see runbook.md#vault-format`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new VaultFileError(`${path} is not JSON; see runbook.md#vault-format`);
  }
  const parsed = policySchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new VaultFileError(
      `${path}: ${issue.path.join(".") || "the file"}: ${issue.message}; it must be ` +
        `{"deny": {"<app>": ["NAME", ...]}}; see runbook.md#vault-format`,
    );
  }
  const list: DenyList = new Map();
  for (const [app, names] of Object.entries(parsed.data.deny)) list.set(app, new Set(names));
  return list;
}

/** Writes the deny list atomically, apps and names sorted, empty apps left out. */
export async function writeDenyList(path: string, list: DenyList): Promise<void> {
  const deny: Record<string, string[]> = {};
  for (const app of [...list.keys()].sort()) {
    const names = [...(list.get(app) ?? [])].sort();
    if (names.length > 0) deny[app] = names;
  }
  await writeVaultFile(path, JSON.stringify({ deny }, null, 2) + "\n");
}
