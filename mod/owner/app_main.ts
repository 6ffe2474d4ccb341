/**
 * The CLI role's side of `gurt app …`, over the admin socket. What an app's server supplied (its
 * tools' names, descriptions and schemas, its errors) is someone else's text: it is shown escaped
 * (mod/owner-text). No key's value is ever in an answer: only whether the vault holds it.
 */
import { AdminClient, type AppDetailView, type AppSummaryView } from "../admin/mod.ts";
import { readAppFolder } from "../apps/app_folder.ts";
import { shownText } from "../owner-text/mod.ts";
import { printOwner } from "./owner_print.ts";

/** What the owner asked. */
export type AppArgs =
  | { socket: string; action: "add"; name: string; folder: string }
  | { socket: string; action: "add"; name: string; npm: string }
  | { socket: string; action: "list" | "check" }
  | { socket: string; action: "check"; folder: string }
  | { socket: string; action: "show" | "remove" | "enable" | "disable" | "reload"; name: string };

/** Prints the answer; exit status 1 when the core refused (or `check` found a problem). */
export default async function main(args: AppArgs): Promise<number> {
  const admin = new AdminClient(args.socket);
  switch (args.action) {
    case "list": {
      const answer = await admin.apps();
      if (!answer.ok) return failed(args.action, answer.error);
      const apps = answer.value.apps;
      if (apps.length === 0) printOwner("no apps installed");
      else printOwner(apps.map(summaryLine).join("\n"));
      return 0;
    }
    case "show": {
      const answer = await admin.app(args.name);
      if (!answer.ok) return failed(args.action, answer.error);
      printOwner(detailLines(answer.value.app).join("\n"));
      return 0;
    }
    case "add": {
      const answer = "npm" in args
        ? await admin.addApp({ name: args.name, npm: args.npm })
        : await admin.addApp({ name: args.name, files: await readAppFolder(args.folder) });
      if (!answer.ok) return failed(args.action, answer.error);
      const app = answer.value.app;
      const lines = [`added ${app.name}: ${count(app.tool_list.length, "tool")}`];
      for (const tool of app.tool_list) lines.push(`  ${shown(tool.name)}`);
      lines.push(...leftOutLines(app));
      printOwner(lines.join("\n"));
      return 0;
    }
    case "remove": {
      const answer = await admin.removeApp(args.name);
      if (!answer.ok) return failed(args.action, answer.error);
      printOwner(`removed ${shown(answer.value.removed)}`);
      return 0;
    }
    case "reload": {
      const answer = await admin.reloadApp(args.name);
      if (!answer.ok) return failed(args.action, answer.error);
      const app = answer.value.app;
      const lines = [`reloaded ${app.name}: ${count(app.tool_list.length, "tool")}`];
      lines.push(...leftOutLines(app));
      printOwner(lines.join("\n"));
      return 0;
    }
    case "enable":
    case "disable": {
      const enable = args.action === "enable";
      const answer = await admin.setAppEnabled(args.name, enable);
      if (!answer.ok) return failed(args.action, answer.error);
      const app = answer.value.app;
      printOwner(
        app.enabled
          ? `${app.name} is on: its ${count(app.tool_list.length, "tool")} are offered to new tasks`
          : `${app.name} is off: its tools are not offered and calls of them are refused${
            app.disabled_by === "manifest" ? " (its app.toml has enabled = false)" : ""
          }`,
      );
      return 0;
    }
    case "check": {
      if ("folder" in args) return await checkFolder(args.folder);
      const answer = await admin.appsCheck();
      if (!answer.ok) return failed(args.action, answer.error);
      const problems = answer.value.problems;
      if (problems.length === 0) {
        printOwner("apps: ok");
        return 0;
      }
      // A manifest's problem names its file and line already; a tool's names only its app.
      printOwner(
        problems.map((found) =>
          found.problem.startsWith("/")
            ? shown(found.problem)
            : `${shown(found.app)}: ${shown(found.problem)}`
        ).join("\n"),
      );
      return 1;
    }
  }
}

function summaryLine(app: AppSummaryView): string {
  const error = app.last_error === null ? "" : `  last error: ${shown(app.last_error, 300)}`;
  return `${app.name}  ${app.kind}  ${app.enabled ? "on" : "off"}  ${shown(app.state)}  ${
    count(app.tools, "tool")
  }${error}`;
}

function detailLines(app: AppDetailView): string[] {
  const off = app.disabled_by === "owner"
    ? "off (gurt app disable)"
    : app.disabled_by === "manifest"
    ? "off (enabled = false in its app.toml)"
    : "on";
  const lines = [`app ${app.name}: ${app.kind}, ${off}, ${shown(app.state)}`];
  if (app.description !== null) lines.push(`  description: ${shown(app.description, 500)}`);
  lines.push(`  folder: ${shown(app.folder)}`);
  lines.push(`  start: ${shown(app.start, 500)}`);
  lines.push(`  manifest sha256: ${shown(app.manifest_sha256, 100)}`);
  lines.push(`  last error: ${app.last_error === null ? "none" : shown(app.last_error, 500)}`);
  if (app.paused_until !== null) lines.push(`  restarts after: ${shown(app.paused_until, 100)}`);
  lines.push(
    `  hosts: ${app.hosts.length === 0 ? "none" : app.hosts.map((h) => shown(h)).join(", ")}`,
  );
  lines.push(`  keys: ${app.secrets.length === 0 ? "none" : ""}`.trimEnd());
  for (const secret of app.secrets) {
    lines.push(`    ${secret.name}  ${keyState(secret)}  (${shown(secret.reaches, 200)})`);
  }
  lines.push(`  tools: ${app.tool_list.length === 0 ? "none" : ""}`.trimEnd());
  for (const tool of app.tool_list) {
    const facts = [
      tool.read_only ? "read-only" : "may change things",
      ...(tool.cost_cents > 0 ? [`${tool.cost_cents} cents a call`] : []),
      ...(tool.server_name === tool.name.slice(app.name.length + 1)
        ? []
        : [`the server's ${shown(JSON.stringify(tool.server_name), 200)}`]),
    ];
    lines.push(`    ${shown(tool.name, 200)}  ${facts.join(", ")}`);
    if (tool.description !== "") lines.push(`      ${shown(tool.description, 500)}`);
    lines.push(`      input: ${shown(JSON.stringify(tool.input) ?? "{}", 1000)}`);
  }
  lines.push(...leftOutLines(app));
  return lines;
}

function keyState(secret: AppDetailView["secrets"][number]): string {
  if (secret.usable === "turned off in app.toml") return "off: turned off in app.toml";
  if (!secret.set) return "missing: not in the vault (gurt vault set)";
  if (secret.usable !== null) return `off: ${shown(secret.usable, 300)}`;
  return "set";
}

function leftOutLines(app: AppDetailView): string[] {
  if (app.left_out.length === 0) return [];
  return [
    "  left out:",
    ...app.left_out.map((left) =>
      `    ${shown(JSON.stringify(left.server_name), 200)}: ${shown(left.problem, 300)}`
    ),
  ];
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

function shown(text: string, max = 2000): string {
  return shownText(text, { max });
}

function failed(action: string, error: string): number {
  console.error(`gurt app ${action}: ${shown(error)}`);
  return 1;
}

/**
 * `gurt app check FOLDER`: the folder's app.toml read as gurt app add would read it, before it is
 * added. The reader is loaded only here (it brings the manifest's schema and TOML).
 */
async function checkFolder(folder: string): Promise<number> {
  const { parseManifest } = await import("../apps/mod.ts");
  const file = `${folder}/app.toml`;
  try {
    const text = await Deno.readTextFile(file);
    parseManifest(file, text, await Deno.realPath(folder));
  } catch (error) {
    printOwner(shown((error as Error).message));
    return 1;
  }
  printOwner(`${shown(file)}: ok`);
  return 0;
}
