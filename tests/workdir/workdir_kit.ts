/**
 * The workdir tests' kit, as root: an owner's folder tree on the host (owned by a uid that is not
 * the core's, nor any task's), a `task.workdir` grant on it, and a core whose tasks run as their
 * own users in their sandboxes.
 */
import { grant, type Json, startBox, type TestBox, until } from "../kit/mod.ts";

/** The owner's uid and gid: no user of the box's, and no task's. */
export const OWNER = 61234;
/** Another user's uid. */
export const OTHER = 61235;

/** The owner's tree: `top/alice/code` (the grant's path), `shop` in it (a git repo), and more. */
export interface OwnerTree {
  top: string;
  /** top/alice: the owner's. */
  alice: string;
  /** top/alice/code: the grant's path. */
  code: string;
  /** top/alice/code/shop: the workdir. */
  shop: string;
}

/** Runs `sh` as root with `PATH` only. */
export async function sh(script: string, cwd = "/"): Promise<string> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", script],
    cwd,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: "/tmp" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`sh failed: ${script}\n${text}`);
  return text;
}

/** Makes the owner's tree: shop is a git repository with one commit, a .env, a hook's sample. */
export async function makeOwnerTree(): Promise<OwnerTree> {
  const top = await Deno.makeTempDir({ prefix: "gurt-workdir-" });
  await Deno.chmod(top, 0o755);
  const alice = `${top}/alice`;
  const code = `${alice}/code`;
  const shop = `${code}/shop`;
  await sh(`set -e
    mkdir -p ${shop}/src ${code}/bobs ${alice}/other
    echo 'outside the workdir' > ${alice}/secret.txt
    echo 'API_KEY=sk-live-owner' > ${shop}/.env
    echo 'export X=1' > ${shop}/.envrc
    echo 'print("hi")' > ${shop}/src/app.py
    cd ${shop}
    git -c init.defaultBranch=main init -q .
    git -c user.name=alice -c user.email=alice@example.com add src/app.py
    git -c user.name=alice -c user.email=alice@example.com commit -q -m first
    ln -s ../../secret.txt ${shop}/link-out
    chown -R ${OWNER}:${OWNER} ${alice}
    chown -R ${OTHER}:${OTHER} ${code}/bobs
    chmod 0755 ${alice} ${code}
  `);
  return { top, alice, code, shop };
}

/** A core as root with a task.workdir grant on `code`, and `toml` as its gurt.toml. */
export function workdirBox(
  tree: OwnerTree,
  options: { mode?: "auto" | "ask"; toml?: string; includeEnv?: boolean } = {},
): Promise<TestBox> {
  let text = grant({ tool: "task.workdir", mode: options.mode ?? "auto", paths: [tree.code] });
  if (options.includeEnv === true) text = `include_env_files = true\n${text}`;
  return startBox({
    core: { asRoot: true },
    grants: { shop: text },
    toml: options.toml ?? "",
  });
}

/** Starts a cmd task running `script` in the workdirs: the admin answer. */
export async function startWorkdirTask(
  box: TestBox,
  script: string,
  workdirs: { path: string; readOnly?: boolean }[],
): Promise<{ status: number; body: Json }> {
  return await box.admin("POST", "/tasks", {
    worker: { kind: "cmd", command: ["/bin/sh", "-c", script] },
    tools: ["example.echo"],
    budgetCents: null,
    workdirs,
  });
}

/** Waits for a task's end: its record, its worker's log and its journal's lines. */
export async function endOf(
  box: TestBox,
  id: string,
): Promise<{ task: Json; log: string; journal: Json[] }> {
  let shown: Json = null;
  await until(async () => {
    shown = (await box.admin("GET", `/tasks/${id}`)).body;
    return shown.task.state !== "running" && shown.task.state !== "waiting";
  }, 90_000);
  const log = await Deno.readTextFile(`${box.home}/tasks/${id}/worker.log`).catch(() => "");
  return { task: shown.task, log, journal: shown.journal };
}

/** The journal's events named `event`, their details. */
export function events(journal: readonly Json[], event: string): Json[] {
  return journal.filter((line) => line.type === "event" && line.event === event).map((line) =>
    line.detail
  );
}

/** The uid of a host path (not following a link). */
export function ownerOf(path: string): number {
  return Deno.lstatSync(path).uid ?? -1;
}
