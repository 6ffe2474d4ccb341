/** Test homes: a fresh temporary folder, laid out as the test needs, removed afterwards. */

/** A file a home starts with: its text, or its text and mode. */
export type HomeFile = string | { text: string; mode: number };

/** What a fresh home holds before the test starts. */
export interface HomeLayout {
  /** The temporary folder's name prefix (default `gurt-test-`). */
  prefix?: string;
  /** Folders to make (with their parents), in order; `mode` is the last one's. */
  dirs?: (string | { path: string; mode: number })[];
  /** Files by path inside the home; their folders are made. */
  files?: Record<string, HomeFile>;
}

/** A new temporary home laid out as `layout` says; remove it with `Deno.remove(home, {recursive})`. */
export async function makeHome(layout: HomeLayout = {}): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: layout.prefix ?? "gurt-test-" });
  await layOut(home, layout);
  return home;
}

/** Makes `layout`'s folders and files in `home` (which exists). */
export async function layOut(home: string, layout: HomeLayout): Promise<void> {
  for (const dir of layout.dirs ?? []) {
    const { path, mode } = typeof dir === "string" ? { path: dir, mode: undefined } : dir;
    await Deno.mkdir(`${home}/${path}`, { recursive: true, mode });
  }
  for (const [path, file] of Object.entries(layout.files ?? {})) {
    const { text, mode } = typeof file === "string" ? { text: file, mode: undefined } : file;
    const slash = path.lastIndexOf("/");
    if (slash > 0) await Deno.mkdir(`${home}/${path.slice(0, slash)}`, { recursive: true });
    await Deno.writeTextFile(`${home}/${path}`, text, { mode });
  }
}

/** Runs `work` on a fresh home laid out as `layout` says, removed afterwards whatever happens. */
export async function withHome(
  work: (home: string) => Promise<void>,
  layout: HomeLayout = {},
): Promise<void> {
  const home = await makeHome(layout);
  try {
    await work(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** The `grants/<id>.toml` files of a home, for HomeLayout.files. */
export function grantFiles(grants: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(grants).map(([id, toml]) => [`grants/${id}.toml`, toml]),
  );
}

/** A home's `gurt.toml` with this text, for HomeLayout.files; none when `toml` is undefined. */
export function tomlFile(toml: string | undefined): Record<string, string> {
  return toml === undefined ? {} : { "gurt.toml": toml };
}

/** Whether anything (a link included) is at `path`. */
export function exists(path: string): Promise<boolean> {
  return Deno.lstat(path).then(() => true, () => false);
}
