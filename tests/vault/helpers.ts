/** Shared by the vault's tests: a vault file in its own folder, a core on it, and setting a key. */
import { type TestBox, withBox } from "../kit/mod.ts";

/** A folder holding a vault file; removed by `remove`. */
export interface VaultFolder {
  dir: string;
  path: string;
  remove(): Promise<void>;
}

/** A folder holding a vault file with `text` and `mode`; removed by `remove`. */
export async function vaultFolder(text: string, mode = 0o600): Promise<VaultFolder> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-vault-" });
  const path = `${dir}/vault.env`;
  await Deno.writeTextFile(path, text, { mode });
  await Deno.chmod(path, mode);
  return { dir, path, remove: () => Deno.remove(dir, { recursive: true }) };
}

/** Runs `work` on a core whose vault is a file with `text` in a folder of its own; both removed afterwards. */
export async function withVaultBox(
  text: string,
  work: (box: TestBox, folder: VaultFolder) => Promise<void>,
): Promise<void> {
  const folder = await vaultFolder(text);
  try {
    await withBox({ env: { BOX_VAULT: folder.path } }, (box) => work(box, folder));
  } finally {
    await folder.remove();
  }
}

/** Sets a vault key over the admin socket and checks it was set. */
export async function putKey(box: TestBox, name: string, value: string): Promise<void> {
  const answer = await box.admin("PUT", `/api/vault/${name}`, { value });
  if (answer.status !== 200) throw new Error(`PUT ${name}: ${JSON.stringify(answer.body)}`);
}
