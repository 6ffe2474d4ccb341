/**
 * Runs the id-map helper (idmap_helper.c, as root): mounts an owner's folder at a staging path with
 * the owner's uid and gid shown as the task user's, nosuid and nodev, read-only for `:ro`.
 */
import { IDMAP_HELPER_ELF_BASE64 } from "./idmap_helper_elf.ts";

/** The helper's bytes. */
export function idmapHelperElf(): Uint8Array {
  return Uint8Array.from(atob(IDMAP_HELPER_ELF_BASE64), (char) => char.charCodeAt(0));
}

/** Why the helper refused a folder, by its exit code. */
export type IdmapRefusal = "not_owner" | "linked" | "root_grant" | "failed";

/** The helper's failure: its refusal and its own line. */
export class IdmapError extends Error {
  constructor(readonly refusal: IdmapRefusal, readonly said: string) {
    super(said);
  }
}

/** The helpers this process has written, by path: each is written once per core. */
const installed = new Set<string>();

/** Writes the helper to `path` (0700, root's) unless it is there with these bytes. */
export async function installIdmapHelper(path: string): Promise<void> {
  if (installed.has(path)) return;
  const bytes = idmapHelperElf();
  const now = await Deno.readFile(path).catch(() => null);
  if (now !== null && now.length === bytes.length && now.every((b, i) => b === bytes[i])) {
    installed.add(path);
    return;
  }
  const temporary = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeFile(temporary, bytes, { mode: 0o700 });
  await Deno.rename(temporary, path);
  installed.add(path);
}

/**
 * Mounts `source` at `target`, the uid of the grant path's owner (who must own `source` too, and
 * not be root) and `source`'s group mapped to `task`'s.
 */
export async function idmapMount(
  helper: string,
  places: { source: string; target: string; grantPath: string },
  ids: { task: { uid: number; gid: number }; readOnly: boolean },
): Promise<void> {
  const out = await new Deno.Command(helper, {
    args: [
      places.source,
      places.target,
      places.grantPath,
      String(ids.task.uid),
      String(ids.task.gid),
      ids.readOnly ? "1" : "0",
    ],
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (out.success) return;
  const said = new TextDecoder().decode(out.stderr).trim();
  const refusal = out.code === 2
    ? "not_owner"
    : out.code === 3
    ? "linked"
    : out.code === 4
    ? "root_grant"
    : "failed";
  throw new IdmapError(refusal, said);
}
