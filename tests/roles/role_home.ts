/** The home the role tests probe: an audit file, a vault and a task folder, which a role may or may not reach. */
import { type HomeLayout, withHome } from "../kit/mod.ts";

/** Runs `fn` on a fresh role test home, with `more` folders and files besides. */
export function withRoleHome(
  fn: (home: string) => Promise<void>,
  more: HomeLayout = {},
): Promise<void> {
  return withHome(fn, {
    prefix: more.prefix ?? "gurt-roles-",
    dirs: ["audit", "tasks/t1", ...(more.dirs ?? [])],
    files: {
      "vault.env": { text: "EXAMPLE_KEY=not-a-real-value\n", mode: 0o600 },
      "audit/2026-11-29.jsonl": "",
      ...more.files,
    },
  });
}
