/** The grant files as the owner's Grants page shows them: each file parsed on its own. */
import type { GrantsAnswer, GrantView } from "../admin/mod.ts";
import { formatProblems, loadGrants, parseGrant } from "../policy/mod.ts";

/** Every grant file of the home, each parsed on its own, and the problems of the set as a whole. */
export async function grantViews(
  home: string,
  appTools: ReadonlySet<string>,
): Promise<GrantsAnswer> {
  const dir = `${home}/grants`;
  const load = await loadGrants(dir, { appTools });
  const grants: GrantView[] = [];
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.name.endsWith(".toml")) names.push(entry.name);
    }
  } catch {
    // loadGrants has already named the problem with the directory.
  }
  for (const name of names.sort()) {
    const file = `${dir}/${name}`;
    const id = name.slice(0, -".toml".length);
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(file);
    } catch (error) {
      grants.push(broken(file, id, [`the file cannot be read: ${(error as Error).message}`]));
      continue;
    }
    const parsed = parseGrant({ file, content: bytes }, { appTools });
    if (!parsed.ok) {
      grants.push(
        broken(file, id, formatProblems(parsed.problems).map((p) => p.replace(`${dir}/`, ""))),
      );
      continue;
    }
    const grant = parsed.grant;
    const constraints = [
      ...grant.paths.map((path) => `path ${path}`),
      ...grant.hosts.map((host) => `host ${host}`),
    ];
    if (grant.untrusted) constraints.push("also for untrusted tasks");
    grants.push({
      file,
      id: grant.id,
      ok: true,
      tool: grant.tool,
      mode: grant.mode,
      label: `max taint ${grant.maxTaint}, result ${grant.resultClass}`,
      expires: grant.expires === null ? null : grant.expires.toISOString(),
      constraints,
      problems: [],
    });
  }
  return { grants, problems: load.ok ? [] : formatProblems(load.problems) };
}

function broken(file: string, id: string, problems: string[]): GrantView {
  return {
    file,
    id,
    ok: false,
    tool: null,
    mode: null,
    label: null,
    expires: null,
    constraints: [],
    problems,
  };
}
