/**
 * The CLI role's side of `gurt tools`: every tool of the box as the running core offers it (the
 * built-ins, gurt's own, the installed apps'), one a line, or with `--json` each with its input's
 * JSON Schema. A task may call only the tools it was started with (`gurt task start --tools`).
 */
import { AdminClient } from "../admin/mod.ts";
import { shownText } from "../owner-text/mod.ts";

/** What the owner asked. */
export interface ToolsArgs {
  socket: string;
  json: boolean;
}

/** Prints the tools; exit status 1 when the core did not answer. */
export default async function main(args: ToolsArgs): Promise<number> {
  const answer = await new AdminClient(args.socket).tools();
  if (!answer.ok) {
    console.error(`gurt tools: ${answer.error}`);
    return 1;
  }
  const { tools } = answer.value;
  if (args.json) {
    console.log(JSON.stringify(tools, null, 2));
    return 0;
  }
  const rows = tools.map((tool) =>
    [
      tool.name,
      tool.readOnly ? "read-only" : "changes",
      tool.costCents === null ? "by input" : money(tool.costCents),
      tool.app ?? "built-in",
      tool.description.split("\n")[0],
    ].map((cell) => shownText(cell, { max: 200 }))
  );
  const head = ["TOOL", "KIND", "COST", "APP", "WHAT IT DOES"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  for (const row of [head, ...rows]) {
    console.log(
      row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])).join("  "),
    );
  }
  return 0;
}

/** Cents as dollars and cents: `free`, `$0.05`, `$19.99`. */
function money(cents: number): string {
  if (cents === 0) return "free";
  return `$${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}
