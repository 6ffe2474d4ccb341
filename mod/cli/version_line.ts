/** What `gurt --version` says: the version, the form this gurt runs in, and the Deno inside it. */
import { codeDir } from "../config/mod.ts";

/** What tools/build_dist.sh writes beside main.ts in both forms of `dist/gurt`. */
interface DistFacts {
  form?: string;
  sources?: string;
}

/**
 * One line: `gurt 0.1.0 (self-extracting, payload sha256 <hex>, deno 2.9.6)`, `(compiled, sources
 * sha256 <hex>, deno …)`, or `(checkout <folder>, deno …)` for main.ts run from a checkout. The
 * self-extracting form's payload hash is the name of the cache folder its header unpacked it into
 * after checking that hash.
 */
export function versionLine(version: string): string {
  const dir = codeDir();
  const deno = `deno ${Deno.version.deno}`;
  let dist: DistFacts | null = null;
  try {
    dist = JSON.parse(Deno.readTextFileSync(`${dir}/dist.json`)) as DistFacts;
  } catch {
    dist = null; // a checkout has no dist.json
  }
  if (dist?.form === "self-extracting") {
    const payload = /\/([0-9a-f]{64})\/program$/.exec(dir)?.[1] ?? "unknown";
    return `gurt ${version} (self-extracting, payload sha256 ${payload}, ${deno})`;
  }
  if (dist?.form === "compiled") {
    return `gurt ${version} (compiled, sources sha256 ${dist.sources ?? "unknown"}, ${deno})`;
  }
  return `gurt ${version} (checkout ${dir}, ${deno})`;
}
