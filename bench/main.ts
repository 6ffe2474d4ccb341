/**
 * `deno task bench`: runs every bench/*_bench.ts in its own process, one after another, so one
 * benchmark's load never skews another's figures. Each prints its own table with its baseline.
 */
const dir = new URL(".", import.meta.url).pathname;
const only = Deno.args[0];
const files = [...Deno.readDirSync(dir)]
  .map((entry) => entry.name)
  .filter((name) => name.endsWith("_bench.ts") && (only === undefined || name.includes(only)))
  .sort();
let failed = 0;
for (const file of files) {
  console.log(`\n## ${file}\n`);
  const status = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--unstable-worker-options",
      "--unstable-no-legacy-abort",
      "--allow-all",
      `${dir}${file}`,
    ],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) {
    console.log(`${file} failed with status ${status.code}`);
    failed++;
  }
}
Deno.exit(failed === 0 ? 0 : 1);
