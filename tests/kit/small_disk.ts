/**
 * A small file system of its own for a test that needs a full disk: a tmpfs of `bytes` mounted at
 * a folder (root only), filled on demand, unmounted by `close`. A write into a full one fails with
 * ENOSPC, cut short where the file's last page had room for part of it.
 */

/** A mounted tmpfs. */
export interface SmallDisk {
  /** Where it is mounted. */
  dir: string;
  /** Fills it to the last byte with a file `name` in `dir` (made if absent). */
  fill(name?: string): Promise<void>;
  /** Removes what `fill` wrote. */
  free(): Promise<void>;
  /** Unmounts it (what it held is gone). */
  close(): Promise<void>;
}

/** Whether this test process may mount a tmpfs (it runs as root). */
export function canMount(): boolean {
  return Deno.uid() === 0;
}

/** Mounts a tmpfs of `bytes` (mode 0700) at `dir`, made if absent. */
export async function mountSmallDisk(dir: string, bytes: number): Promise<SmallDisk> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await run(["mount", "-t", "tmpfs", "-o", `size=${bytes},mode=0700`, "tmpfs", dir]);
  const fillers: string[] = [];
  return {
    dir,
    async fill(name = ".filler") {
      const path = `${dir}/${name}`;
      fillers.push(path);
      const file = await Deno.open(path, { write: true, create: true, append: true });
      const chunk = new Uint8Array(4096);
      try {
        for (;;) await file.write(chunk);
      } catch (error) {
        if (!(error instanceof Error) || !/No space left/.test(error.message)) throw error;
      } finally {
        file.close();
      }
      // A last page partly free would take a small write: fill it byte by byte.
      const tail = await Deno.open(path, { write: true, append: true });
      try {
        for (;;) await tail.write(new Uint8Array(1));
      } catch {
        // full
      } finally {
        tail.close();
      }
    },
    async free() {
      for (const path of fillers.splice(0)) await Deno.remove(path).catch(() => {});
    },
    async close() {
      await run(["umount", "-l", dir]);
    },
  };
}

async function run(command: string[]): Promise<void> {
  const out = await new Deno.Command(command[0], { args: command.slice(1), stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`${command.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}
