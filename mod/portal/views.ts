/** What the pages show, read from the box home: grant files, the audit verification, task records. */
import {
  type AuditRecord,
  checkpointOf,
  listAuditFiles,
  parseRecordLine,
  verifyHome,
  verifyLines,
} from "../audit/mod.ts";
import { formatProblems, loadGrants, parseGrant } from "../policy/mod.ts";
import type { AuditView } from "./pages/audit_page.tsx";
import type { GrantView } from "./pages/grants_page.tsx";

/** Every grant file of the home, each parsed on its own, and the problems of the set as a whole. */
export async function grantViews(
  home: string,
  appTools: ReadonlySet<string>,
): Promise<{ grants: GrantView[]; problems: string[] }> {
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
    const parsed = parseGrant(file, bytes, { appTools });
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

/** Verifies the home's audit log as `gurt audit verify` does, with the checkpoint line. */
export async function auditView(home: string): Promise<AuditView> {
  const report = await verifyHome(home);
  const { lines, status } = verifyLines(report);
  return {
    ok: status === 0,
    lines,
    records: report.records,
    head: report.head,
    checkpoint: status === 0 ? checkpointOf(report) : null,
  };
}

/** The most records the task page shows; the newest are kept. */
const RECORDS_SHOWN = 500;

/** The audit records that name task `id`, oldest first (the newest RECORDS_SHOWN). */
export async function taskRecords(home: string, id: string): Promise<AuditRecord[]> {
  const dir = `${home}/audit`;
  const out: AuditRecord[] = [];
  const encoder = new TextEncoder();
  for (const name of await listAuditFiles(dir)) {
    const text = await Deno.readTextFile(`${dir}/${name}`);
    for (const line of text.split("\n")) {
      if (line === "" || !line.includes(id)) continue;
      const parsed = parseRecordLine(encoder.encode(line));
      if (parsed.record === null) continue;
      if ((parsed.record.event as { task?: unknown }).task !== id) continue;
      out.push(parsed.record);
      if (out.length > RECORDS_SHOWN) out.shift();
    }
  }
  return out;
}
