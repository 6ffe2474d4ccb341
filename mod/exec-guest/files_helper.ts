/**
 * The files helper (files_helper.c, built by tools/build_files_helper.sh): a 4 KB static x86-64
 * Linux program that does one file operation beneath the workspace, every path opened with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) from the workspace's root. The guest resolves a
 * path itself (jail.ts: links that stay inside are followed, the rest is path_escape), then has the
 * helper act on the link-free result; a folder swapped for a link in between makes the helper fail
 * with ELOOP, and it never reaches outside. Deno cannot do this itself: it has no openat, and it
 * refuses /proc/self/fd (the other way to check what was opened) to a role without every
 * permission.
 */
import { FILES_HELPER_ELF_BASE64 } from "./files_helper_elf.ts";

/** The helper's bytes. */
export function filesHelperElf(): Uint8Array {
  return Uint8Array.from(atob(FILES_HELPER_ELF_BASE64), (char) => char.charCodeAt(0));
}

/** The helper failed with this errno; the caller says what it means for its path. */
export class HelperErrno extends Error {
  constructor(readonly errno: number) {
    super(`the files helper failed with errno ${errno}`);
    this.name = "HelperErrno";
  }
}

/** One entry of a folder, as the helper lists it. */
export interface HelperEntry {
  name: string;
  kind: "file" | "directory" | "symlink" | "other";
  size: number;
}

/**
 * What a read found: a file's bytes (null past the limit), a folder, a folder where a file was
 * wanted, or neither.
 */
export type HelperRead =
  | { kind: "file"; size: number; bytes: Uint8Array | null }
  | { kind: "directory"; entries: HelperEntry[]; truncated: boolean }
  | { kind: "is_directory" }
  | { kind: "other" };

const KINDS: Record<string, HelperEntry["kind"]> = {
  f: "file",
  d: "directory",
  l: "symlink",
  o: "other",
};

/** Runs the helper at `program` on the workspace `root`; paths are relative to it, "." the root. */
export class FilesHelper {
  constructor(readonly program: string, readonly root: string) {}

  /** A regular file's bytes (at most maxBytes), or a folder's entries (at most maxEntries). */
  async read(path: string, limits: { maxBytes: number; maxEntries: number }): Promise<HelperRead> {
    const args = ["read", path, String(limits.maxBytes), String(limits.maxEntries)];
    const out = await this.run(args, null);
    const newline = out.indexOf(10);
    const header = new TextDecoder().decode(out.subarray(0, newline));
    const body = out.subarray(newline + 1);
    if (header === "d") return { kind: "directory", ...entriesOf(body) };
    if (header === "D") return { kind: "is_directory" };
    if (header === "o") return { kind: "other" };
    const [tag, size] = header.split(" ");
    if (tag === "b") return { kind: "file", size: Number(size), bytes: null };
    if (tag !== "f") throw new Error(`the files helper answered ${JSON.stringify(header)}`);
    const bytes = body.byteLength > limits.maxBytes ? null : body;
    return { kind: "file", size: bytes === null ? body.byteLength : Number(size), bytes };
  }

  /** A regular file's bytes as a stream (the helper stops if the stream is cancelled). */
  async raw(
    path: string,
  ): Promise<HelperRead | { kind: "stream"; bytes: ReadableStream<Uint8Array> }> {
    const child = this.spawn(["raw", path], "null");
    const stderr = new Response(child.stderr).text();
    const reader = child.stdout.getReader();
    let head: Uint8Array = new Uint8Array(0);
    while (!head.includes(10)) {
      const { done, value } = await reader.read();
      if (done) {
        const status = await child.status;
        throw errnoOf(status.code, await stderr);
      }
      head = concat(head, value);
    }
    const newline = head.indexOf(10);
    const header = new TextDecoder().decode(head.subarray(0, newline));
    if (header === "D" || header === "o") {
      await reader.cancel();
      await child.status;
      return header === "D" ? { kind: "is_directory" } : { kind: "other" };
    }
    let first: Uint8Array | null = head.subarray(newline + 1);
    const bytes = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (first !== null && first.byteLength > 0) {
          controller.enqueue(first);
          first = null;
          return;
        }
        first = null;
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        const status = await child.status;
        if (status.code === 0) controller.close();
        else controller.error(errnoOf(status.code, await stderr));
      },
      async cancel() {
        try {
          child.kill("SIGKILL");
        } catch {
          // It had ended.
        }
        await reader.cancel();
        await child.status;
      },
    });
    return { kind: "stream", bytes };
  }

  /** Writes `bytes` into a regular file, made if new; a folder or anything else is refused. */
  async write(path: string, bytes: Uint8Array): Promise<"ok" | "is_directory" | "other"> {
    const out = new TextDecoder().decode(await this.run(["write", path], bytes));
    return out === "D\n" ? "is_directory" : out === "o\n" ? "other" : "ok";
  }

  /** Makes one folder. */
  async mkdir(path: string): Promise<void> {
    await this.run(["mkdir", path], null);
  }

  /** Deletes a file, a link or a folder (with its contents only if recursive). */
  async delete(path: string, recursive: boolean): Promise<void> {
    await this.run(["delete", path, recursive ? "1" : "0"], null);
  }

  /** Renames, never replacing what is at `to` (EEXIST). */
  async move(from: string, to: string): Promise<void> {
    await this.run(["move", from, to], null);
  }

  private spawn(args: string[], stdin: "null" | "piped"): Deno.ChildProcess {
    return new Deno.Command(this.program, {
      args: [this.root, ...args],
      clearEnv: true,
      stdin,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  }

  /** Runs the helper to its end; its standard output, or HelperErrno. */
  private async run(args: string[], input: Uint8Array | null): Promise<Uint8Array> {
    const child = this.spawn(args, input === null ? "null" : "piped");
    if (input !== null) {
      const writer = child.stdin.getWriter();
      // A refusal (a FIFO, a folder) ends the helper before it reads: the pipe then breaks.
      await writer.write(input).catch(() => {});
      await writer.close().catch(() => {});
    }
    const output = await child.output();
    if (output.code !== 0) throw errnoOf(output.code, new TextDecoder().decode(output.stderr));
    return output.stdout;
  }
}

/** Parses the helper's folder listing: "KIND SIZE NAME\0" per entry, "t\0" when cut short. */
function entriesOf(body: Uint8Array): { entries: HelperEntry[]; truncated: boolean } {
  const entries: HelperEntry[] = [];
  let truncated = false;
  const decoder = new TextDecoder();
  let start = 0;
  for (let at = 0; at < body.byteLength; at++) {
    if (body[at] !== 0) continue;
    const record = decoder.decode(body.subarray(start, at));
    start = at + 1;
    if (record === "t") {
      truncated = true;
      continue;
    }
    const first = record.indexOf(" ");
    const second = record.indexOf(" ", first + 1);
    entries.push({
      kind: KINDS[record.slice(0, first)] ?? "other",
      size: Number(record.slice(first + 1, second)),
      name: record.slice(second + 1),
    });
  }
  return { entries, truncated };
}

function errnoOf(code: number, stderr: string): Error {
  const match = /^gurt-files: errno ([0-9]{3})\n$/.exec(stderr);
  if (code === 1 && match !== null) return new HelperErrno(Number(match[1]));
  return new Error(`the files helper ended with status ${code}: ${stderr.trim()}`);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}
