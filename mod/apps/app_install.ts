/**
 * Putting an app in place: `gurt app add PATH` sends the files of a folder that holds an app.toml
 * (app_folder.ts), which are written into BOX_HOME/apps/<name>; `gurt app add npm:PACKAGE@VERSION --name NAME` installs an MCP server from
 * the npm registry once, pinned, into a new app folder with a manifest that runs its binary with
 * node, so the box runs it offline from then on. Either is made in a staging folder beside the
 * apps and renamed into place only once its manifest reads; the caller then starts it and lists
 * its tools, and removes it again if that fails. Nothing is ever half-installed.
 */
import { type AppManifest, appNameProblem, readManifest } from "./manifest.ts";
import { type AppFile, BOX_FILES, MAX_FOLDER_BYTES, MAX_FOLDER_FILES } from "./app_folder.ts";

/** The apps' folder of a box home. */
export function appsDir(home: string): string {
  return `${home}/apps`;
}

/** An app's folder. */
export function appDir(home: string, name: string): string {
  return `${appsDir(home)}/${name}`;
}

/** An install that cannot go ahead: the owner reads this sentence. */
export class AppInstallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AppInstallError";
  }
}

/** `npm:PACKAGE@VERSION`, the version exact (no range, no tag). */
const NPM_SPEC =
  /^npm:((?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*)@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/;

/** What an install is asked to put in place. */
export type AppSource = { kind: "files"; files: readonly AppFile[] } | {
  kind: "npm";
  spec: string;
};

/** Reads `gurt app add npm:…`'s SOURCE. */
export function parseNpmSource(source: string): AppSource {
  if (source.startsWith("npm:")) {
    if (!NPM_SPEC.test(source)) {
      throw new AppInstallError(
        `${
          JSON.stringify(source)
        } is not npm:PACKAGE@VERSION with an exact version, such as npm:@modelcontextprotocol/server-memory@2026.8.31; see runbook.md#app-install-failed`,
      );
    }
    return { kind: "npm", spec: source };
  }
  throw new AppInstallError(`${JSON.stringify(source.slice(0, 200))} is not npm:PACKAGE@VERSION`);
}

/**
 * Makes apps/<name> from `source`: returns its manifest (read from its new place). Throws an
 * AppInstallError, having left nothing, when the name is taken or bad, or the source unusable.
 */
export async function placeApp(
  home: string,
  name: string,
  source: AppSource,
  options: { npm?: string; log?: (line: string) => void } = {},
): Promise<AppManifest> {
  const problem = appNameProblem(name);
  if (problem !== null) throw new AppInstallError(problem);
  const target = appDir(home, name);
  if (await exists(target)) {
    throw new AppInstallError(
      `an app ${name} is installed already; gurt app remove ${name} first; see runbook.md#app-install-failed`,
    );
  }
  await Deno.mkdir(appsDir(home), { recursive: true, mode: 0o711 });
  const staging = `${appsDir(home)}/.staging-${name}-${crypto.randomUUID().slice(0, 8)}`;
  try {
    if (source.kind === "files") await writeFiles(source.files, staging);
    else await npmInstall(source.spec, staging, options.npm ?? "npm");
    // The manifest is read where it will stay, so its paths are its folder's own.
    await readManifest(staging).catch((error) => {
      // The staging folder is gone by the time the owner reads this: name the manifest alone.
      throw new AppInstallError((error as Error).message.replaceAll(`${staging}/`, ""));
    });
    await Deno.rename(staging, target);
    return await readManifest(target);
  } catch (error) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    if (error instanceof AppInstallError) throw error;
    throw new AppInstallError(
      `the app ${name} could not be put in place: ${
        (error as Error).message
      }; see runbook.md#app-install-failed`,
    );
  }
}

/** Removes an app's folder, whatever is in it. */
export async function removeAppFolder(home: string, name: string): Promise<void> {
  await Deno.remove(appDir(home, name), { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/** Writes the files `gurt app add` sent, each path checked; nothing outside `to`. */
async function writeFiles(files: readonly AppFile[], to: string): Promise<void> {
  if (files.length > MAX_FOLDER_FILES) {
    throw new AppInstallError(`the app's folder holds more than ${MAX_FOLDER_FILES} files`);
  }
  if (!files.some((file) => file.path === "app.toml")) {
    throw new AppInstallError(
      "the app's folder holds no app.toml; see runbook.md#app-install-failed",
    );
  }
  await Deno.mkdir(to, { mode: 0o755 });
  let bytes = 0;
  const seen = new Set<string>();
  for (const file of files) {
    const parts = file.path.split("/");
    const bad = parts.some((part) =>
      part === "" || part === "." || part === ".." || /[\0\\]/.test(part) || part.length > 255
    );
    if (bad || file.path.length > 1024 || BOX_FILES.has(parts[0]) || seen.has(file.path)) {
      throw new AppInstallError(
        `${
          JSON.stringify(file.path.slice(0, 200))
        } is not a path an app's folder may hold; see runbook.md#app-install-failed`,
      );
    }
    seen.add(file.path);
    const data = fromBase64(file.data);
    bytes += data.length;
    if (bytes > MAX_FOLDER_BYTES) {
      throw new AppInstallError(`the app's folder holds more than ${MAX_FOLDER_BYTES} bytes`);
    }
    if (parts.length > 1) {
      await Deno.mkdir(`${to}/${parts.slice(0, -1).join("/")}`, { recursive: true, mode: 0o755 });
    }
    // Read by the app's user, written by nobody but root.
    await Deno.writeFile(`${to}/${file.path}`, data, {
      createNew: true,
      mode: file.executable ? 0o755 : 0o644,
    });
  }
}

function fromBase64(text: string): Uint8Array {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    throw new AppInstallError("a file of the app's folder was not sent as base64");
  }
}

/**
 * Installs `npm:PACKAGE@VERSION` into `folder` (exact, no install scripts) and writes the app.toml
 * that runs its one binary.
 */
async function npmInstall(spec: string, folder: string, npm: string): Promise<void> {
  const [, pkg, version] = NPM_SPEC.exec(spec)!;
  await Deno.mkdir(folder, { mode: 0o755 });
  const out = await new Deno.Command(npm, {
    args: [
      "install",
      "--prefix",
      folder,
      "--no-audit",
      "--no-fund",
      "--save-exact",
      "--ignore-scripts",
      "--loglevel=error",
      `${pkg}@${version}`,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output().catch((error) => {
    throw new AppInstallError(
      `npm could not be run (${(error as Error).message}); see runbook.md#app-install-failed`,
    );
  });
  if (!out.success) {
    const said = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join(" ");
    throw new AppInstallError(
      `npm could not install ${pkg}@${version}: ${
        said.slice(0, 500)
      }; see runbook.md#app-install-failed`,
    );
  }
  const manifest = JSON.parse(
    await Deno.readTextFile(`${folder}/node_modules/${pkg}/package.json`),
  ) as { bin?: string | Record<string, string>; description?: string };
  const bins = typeof manifest.bin === "string"
    ? [manifest.bin]
    : Object.values(manifest.bin ?? {});
  if (bins.length !== 1) {
    throw new AppInstallError(
      `${pkg}@${version} has ${bins.length} binaries, not one; write an app.toml for it and gurt app add its folder; see runbook.md#app-install-failed`,
    );
  }
  const binary = `./node_modules/${pkg}/${bins[0].replace(/^\.\//, "")}`;
  const lines = [
    `# Installed by gurt app add ${spec}.`,
    `kind = "mcp"`,
    ...(manifest.description === undefined
      ? []
      : [`description = ${JSON.stringify(manifest.description.slice(0, 500))}`]),
    // Its binary as the program (npm made it executable; its #! line names node): an argument
    // is not resolved in the app's folder, and the server runs in its home, not its folder.
    `command = [${JSON.stringify(binary)}]`,
    "",
  ];
  await Deno.writeTextFile(`${folder}/app.toml`, lines.join("\n"), { mode: 0o644 });
}
