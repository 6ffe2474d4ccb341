/**
 * A task's spend by model in words, as `gurt task show`, `gurt task list`, `gurt usage` and the
 * portal's task page show it: dollars to four decimals (a hundredth of a cent), rounded to the
 * nearest; a spend above nothing that rounds to $0.0000 shows as `<$0.0001`. The exact figure is
 * kept in billionths of a cent; the audit log's cost records stay whole cents.
 */
import type { JournalLineView, SpendRowView } from "../admin/mod.ts";
import { shownText } from "./escape.ts";
import { centsText } from "../common/mod.ts";

export { centsText };

/** An exact spend (billionths of a cent) in dollars, `$0.0123`. */
export function dollarsText(nanocents: number): string {
  // Billionths of a cent to hundredths of a cent (1e7 of them), the figure shown.
  const hundredths = Math.round(nanocents / 10_000_000);
  if (hundredths === 0 && nanocents > 0) return "<$0.0001";
  return `$${(hundredths / 10_000).toFixed(4)}`;
}

/** The sentence for a model the box has no price for. */
export function unpricedText(model: string): string {
  return `priced at the highest listed rate: no price for ${
    shownText(model, { max: 200 })
  }; set one in gurt.toml's [models.prices]. see runbook.md#model-price`;
}

/** The sum of the rows' exact spend, billionths of a cent. */
export function totalNanocents(rows: readonly SpendRowView[]): number {
  return rows.reduce((sum, row) => sum + row.nanocents, 0);
}

/** The header and one row per model of a spend table, columns padded; then the notes. */
export function spendTable(rows: readonly SpendRowView[]): string[] {
  if (rows.length === 0) return ["no model answers"];
  const head = ["model", "provider", "requests", "input", "output", "cache write", "cache read"];
  const table = [[...head, "cost"]];
  for (const row of rows) {
    table.push([
      shownText(row.model, { max: 80 }),
      row.provider === null ? "-" : shownText(row.provider, { max: 64 }),
      String(row.requests),
      String(row.input),
      String(row.output),
      String(row.cacheWrite),
      String(row.cacheRead),
      dollarsText(row.nanocents),
    ]);
  }
  table.push(["total", "", "", "", "", "", "", dollarsText(totalNanocents(rows))]);
  const widths = table[0].map((_, column) =>
    Math.max(...table.map((cells) => cells[column].length))
  );
  const lines = table.map((cells) =>
    cells.map((cell, column) =>
      column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])
    )
      .join("  ").trimEnd()
  );
  return [...lines, ...spendNotes(rows)];
}

/** What the rows' figures rest on: a model with no price, answers charged their bound. */
export function spendNotes(rows: readonly SpendRowView[]): string[] {
  const notes: string[] = [];
  for (const row of rows) {
    if (row.unpriced > 0) notes.push(unpricedText(row.model));
    if (row.bounded > 0) {
      notes.push(
        `${row.bounded} ${shownText(row.model, { max: 200 })} answer${
          row.bounded === 1 ? " was" : "s were"
        } cut short before saying their usage and charged the most they could cost`,
      );
    }
  }
  return notes;
}

const BASES: Record<string, string> = {
  owner: "at the owner's price",
  listed: "at the listed price",
  reported: "as the provider reported it",
  bound: "at the most it could cost (its answer was never read: recovered at start)",
};

/** A model.usage journal line in words. */
export function usageWords(line: JournalLineView): string {
  const tokens =
    (typeof line.tokens === "object" && line.tokens !== null ? line.tokens : {}) as Record<
      string,
      unknown
    >;
  const model = shownText(String(line.model), { max: 200 });
  const where = shownText(String(line.provider ?? line.service), { max: 64 });
  const counts =
    `input ${tokens.input}, output ${tokens.output}, cache write ${tokens.cacheWrite}, cache read ${tokens.cacheRead}`;
  const basis = line.rates === "highest"
    ? unpricedText(String(line.model))
    : BASES[String(line.rates)] ?? shownText(String(line.rates), { max: 40 });
  const cut = line.cut === "reported"
    ? "; cut short after its usage: charged the usage it reported"
    : line.cut === "bound"
    ? "; cut short before its usage: charged the most it could cost"
    : "";
  return `usage ${model} (${where}): ${counts}; ${
    dollarsText(Number(line.nanocents))
  } ${basis}${cut}`;
}
