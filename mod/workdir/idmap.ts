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
 * not be root) and `source`'s group mapped to `task`'s. With `covers`, once the mount is there the
 * helper waits while `covers` lists it and says what to lay over it (lines `KIND REL`, see
 * idmap_helper.c), then lays each; a `covers` that throws leaves the mount bare, and is rethrown.
 */
export async function idmapMount(
  helper: string,
  places: {
    source: string;
    target: string;
    grantPath: string;
    empty?: { file: string; dir: string };
  },
  ids: { task: { uid: number; gid: number }; readOnly: boolean },
  covers?: () => string[],
): Promise<void> {
  const empty = places.empty;
  const child = new Deno.Command(helper, {
    args: [
      places.source,
      places.target,
      places.grantPath,
      String(ids.task.uid),
      String(ids.task.gid),
      ids.readOnly ? "1" : "0",
      ...(empty === undefined || covers === undefined ? [] : [empty.file, empty.dir]),
    ],
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  let thrown: unknown = null;
  if (covers !== undefined && empty !== undefined) {
    const said = await firstLine(child.stdout);
    if (said === "mounted") {
      let lines: string[] = [];
      try {
        lines = covers();
      } catch (error) {
        thrown = error;
      }
      await writer.write(new TextEncoder().encode(lines.map((line) => `${line}\n`).join("")))
        .catch(() => {});
    }
  } else {
    await child.stdout.cancel();
  }
  await writer.close().catch(() => {});
  const status = await child.status;
  const said = (await stderr).trim();
  if (!status.success) {
    const refusal = status.code === 2
      ? "not_owner"
      : status.code === 3
      ? "linked"
      : status.code === 4
      ? "root_grant"
      : "failed";
    throw new IdmapError(refusal, said);
  }
  if (thrown !== null) throw thrown;
}

/** The first line of a stream (the rest is read and dropped), or "" at its end. */
async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    if (text.includes("\n")) break;
  }
  stream.cancel().catch(() => {});
  return text.split("\n")[0];
}
