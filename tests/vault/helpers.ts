/** Shared by the vault's tests: a vault file in its own folder, and the admin socket's vault routes. */
import { adminSocketPath } from "../../mod/config/mod.ts";
import { requestJson } from "../../mod/net/mod.ts";
import type { Json, TestBox } from "../kit/mod.ts";

/** A folder holding a vault file with `text` and `mode`; removed by `remove`. */
export async function vaultFolder(
  text: string,
  mode = 0o600,
): Promise<{ dir: string; path: string; remove(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-vault-" });
  const path = `${dir}/vault.env`;
  await Deno.writeTextFile(path, text, { mode });
  await Deno.chmod(path, mode);
  return { dir, path, remove: () => Deno.remove(dir, { recursive: true }) };
}

/** One request on the box's admin socket, any method. */
export function adminRequest(
  box: TestBox,
  method: "GET" | "PUT" | "DELETE" | "POST",
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  return requestJson(adminSocketPath(box.home), { method, path, body }) as Promise<
    { status: number; body: Json }
  >;
}

/** Sets a vault key over the admin socket and checks it was set. */
export async function putKey(box: TestBox, name: string, value: string): Promise<void> {
  const answer = await adminRequest(box, "PUT", `/api/vault/${name}`, { value });
  if (answer.status !== 200) throw new Error(`PUT ${name}: ${JSON.stringify(answer.body)}`);
}
