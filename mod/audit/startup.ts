/**
 * The startup check's reading half (docs/audit.md#start-and-crashes, step 2): which files to verify
 * and from where. The writer acts on the report it returns.
 */
import type { ChainReport } from "./chain_report.ts";
import { ChainVerifier } from "./chain_verifier.ts";
import { lastLineOf, listAuditFiles } from "./files.ts";
import { sha256Hex } from "./hash.ts";
import { parseRecordLine } from "./records.ts";

/** The report of the startup check and the audit files it found, in name order. */
export interface StartupReport {
  report: ChainReport;
  files: string[];
  /** Whether only the latest file was read, resumed from the file before it. */
  resumed: boolean;
}

/**
 * Without acceptBreak: verifies the latest file, resumed from the last line of the file before it
 * (the whole log if that line is not a record). With acceptBreak: verifies every file.
 */
export async function checkAtStartup(dir: string, acceptBreak: boolean): Promise<StartupReport> {
  const files = await listAuditFiles(dir);
  if (!acceptBreak && files.length > 1) {
    const latest = files[files.length - 1];
    const last = lastLineOf(await Deno.readFile(`${dir}/${files[files.length - 2]}`));
    const parsed = last !== null && last.hasNewline ? parseRecordLine(last.bytes) : null;
    if (last !== null && parsed !== null && parsed.record !== null) {
      const verifier = ChainVerifier.resume(parsed.record.seq + 1, sha256Hex(last.bytes));
      verifier.feed(latest, await Deno.readFile(`${dir}/${latest}`));
      return { report: verifier.finish(), files, resumed: true };
    }
  }
  const verifier = new ChainVerifier();
  for (const name of files) verifier.feed(name, await Deno.readFile(`${dir}/${name}`));
  return { report: verifier.finish(), files, resumed: false };
}
