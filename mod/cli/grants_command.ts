/** `gurt grants check` and `gurt grants explain`: the owner's view of the grant files. */
import type { Command } from "commander";
import { adminSocketPath, type Config } from "../config/mod.ts";
import type { GrantsJob, KeptToolList } from "../owner/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith, loadModule } from "./run.ts";
import { missingGrantPaths } from "./grant_paths.ts";

/** Registers `gurt grants check` and `gurt grants explain`. */
export function registerGrantsCommand(program: Command): void {
  const grants = program
    .command("grants")
    .description("check the grant files, or explain how a call would be decided");
  grants
    .command("check")
    .description(
      "print each problem with the grant files as <file>:<line>: <problem>, or grants: ok",
    )
    .action((_options, command: Command) =>
      exitWith(() => {
        const config = configFor(command);
        const apps = keptToolLists(config);
        const job: GrantsJob = {
          action: "check",
          home: config.home,
          socket: adminSocketPath(config.home),
          apps,
          missingPaths: missingGrantPaths(`${config.home}/grants`),
        };
        return launchRole(ROLE_TABLE.grants, {
          places: { config, files: apps.map((app) => app.file) },
          args: job,
        });
      })
    );
  grants
    .command("explain")
    .description(
      "decide a call as the core would, and say why: exit 0 allowed, 2 ask, 1 denied",
    )
    .argument("<tool>", "the tool, such as read_file or example.spend")
    .argument("<args_json>", "the call's arguments as a JSON object")
    .option("--taint <taint>", "the task's taint: private or secret", "private")
    .option("--untrusted", "the task has seen untrusted data", false)
    .option("--at <time>", "decide at this time (RFC 3339, such as 2027-01-01T00:00:00Z)")
    .action(
      (
        tool: string,
        argsJson: string,
        options: { taint: string; untrusted: boolean; at?: string },
        command: Command,
      ) =>
        exitWith(async () => {
          const config = configFor(command);
          const apps = keptToolLists(config);
          const job: GrantsJob = {
            action: "explain",
            home: config.home,
            apps,
            tool,
            arguments: parseArgumentsJson(argsJson),
            taint: parseTaint(options.taint),
            untrusted: options.untrusted,
            at: await parseAt(options.at),
          };
          return launchRole(ROLE_TABLE.grants, {
            places: { config, files: apps.map((app) => app.file) },
            args: job,
          });
        }),
    );
}

function parseArgumentsJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(
      `the arguments are not valid JSON (${why}); quote them, such as '{"path": "/a"}'`,
    );
  }
}

function parseTaint(text: string): "private" | "secret" {
  if (text === "private" || text === "secret") return text;
  throw new Error(
    `--taint must be private or secret (a task is never below private), got ${
      JSON.stringify(text)
    }`,
  );
}

async function parseAt(text: string | undefined): Promise<string> {
  if (text === undefined) return new Date().toISOString();
  const { parseTimestamp } = await loadModule<typeof import("../policy/mod.ts")>(
    new URL("../policy/mod.ts", import.meta.url),
  );
  const at = parseTimestamp(text);
  if (at === null) {
    throw new Error(
      `--at must be a time with a zone, such as 2027-01-01T00:00:00Z, got ${JSON.stringify(text)}`,
    );
  }
  return at.toISOString();
}

/**
 * The kept tool list (apps/<name>/tools.json) of each installed app, turned off or not (as the
 * core counts them): its tools' names are the app tools a grant may name when the core is not
 * there to ask. The CLI role may read these files and nothing else of apps/ (an app's home may
 * hold a key it was given).
 */
function keptToolLists(config: Config): KeptToolList[] {
  const apps = `${config.home}/apps`;
  const found: KeptToolList[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(apps)];
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!entry.isDirectory || entry.name.startsWith(".")) continue;
    const folder = `${apps}/${entry.name}`;
    const there = (name: string) => {
      try {
        return Deno.lstatSync(`${folder}/${name}`).isFile;
      } catch {
        return false;
      }
    };
    if (there("tools.json")) {
      found.push({ app: entry.name, file: `${folder}/tools.json` });
    }
  }
  return found.sort((a, b) => a.app < b.app ? -1 : a.app > b.app ? 1 : 0);
}
