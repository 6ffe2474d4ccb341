/** The CLI role's side of `gurt config`: prints the configuration as TOML. */
import { stringify } from "smol-toml";
import { type Config, vaultWhy } from "../config/mod.ts";

/** Prints where the box home, gurt.toml and the vault are, then every setting. */
export default function main(config: Config): Promise<number> {
  const { home, vault, vaultFrom, file, vaultSettings, fromEnv, portalListenSet, ...rest } = config;
  const settings = { ...rest, vault: vaultSettings };
  console.log(`# box home: ${home}`);
  console.log(`# gurt.toml: ${file}`);
  console.log(`# vault: ${vault} (${vaultWhy(vaultFrom)})`);
  if (!portalListenSet) {
    console.log(
      `# portal.listen: not set, so ${rest.portal.listen}, or a free port when it is taken`,
    );
  }
  for (const [setting, variable] of Object.entries(fromEnv ?? {})) {
    console.log(`# ${setting}: from ${variable}, over gurt.toml`);
  }
  console.log(stringify(settings));
  return Promise.resolve(0);
}
