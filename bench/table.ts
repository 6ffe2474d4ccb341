/** Prints a benchmark's figures beside the baseline measured in the same run, as a ratio. */

/** One row: what was measured, its figure, the baseline's figure, and the target ratio. */
export interface BenchRow {
  what: string;
  unit: string;
  value: number;
  baselineWhat: string;
  baseline: number;
  /** The target, e.g. ">= 0.8" or "<= 1.3", for the ratio value/baseline. */
  target: string;
}

/** Prints rows as a Markdown table with the ratio and whether the target was met. */
export function printTable(rows: BenchRow[]): void {
  console.log("| measured | figure | baseline | baseline figure | ratio | target | met |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const row of rows) {
    const ratio = row.value / row.baseline;
    console.log(
      `| ${row.what} | ${fmt(row.value)} ${row.unit} | ${row.baselineWhat} | ${
        fmt(row.baseline)
      } ${row.unit} | ${ratio.toFixed(2)} | ${row.target} | ${met(ratio, row.target)} |`,
    );
  }
}

function fmt(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString("en") : value.toPrecision(3);
}

function met(ratio: number, target: string): string {
  const match = /^(>=|<=)\s*([0-9.]+)$/.exec(target);
  if (!match) return "?";
  const bound = Number(match[2]);
  return (match[1] === ">=" ? ratio >= bound : ratio <= bound) ? "yes" : "no";
}
