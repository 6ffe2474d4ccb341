/**
 * `gurt agent-run AGENT`: a coding agent as its task's worker (started by gurt serve for
 * `--worker claude|codex|droid|opencode`), run in the worker role on BOX_SOCKET in the task's home,
 * with the agent's binary the one program it may start.
 */
import type { Command } from "commander";
import {
  adapterOf,
  AGENT_NAMES,
  agentBinary,
  agentDir,
  type AgentName,
  type AgentRunArgs,
  MCP_WAIT_MS,
  missingAgent,
} from "../agents/mod.ts";
import { gurtInvocation } from "../core/mod.ts";
import { endpointsFromEnv } from "../loop/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { exitWith } from "./run.ts";

/** Registers `gurt agent-run`. */
export function registerAgentRunCommand(program: Command): void {
  program
    .command("agent-run")
    .argument("<agent>", AGENT_NAMES.join(", "))
    .description(
      "a coding agent as a task's worker (started by gurt serve; needs BOX_SOCKET, HOME and the task's model endpoint)",
    )
    .action((agent: string) =>
      exitWith(async () => {
        if (!(AGENT_NAMES as readonly string[]).includes(agent)) {
          throw new Error(
            `agent-run: the agent must be one of ${AGENT_NAMES.join(", ")}, not ${
              JSON.stringify(agent)
            }`,
          );
        }
        const socket = Deno.env.get("BOX_SOCKET");
        const task = Deno.env.get("BOX_TASK");
        const home = Deno.env.get("HOME");
        if (socket === undefined || task === undefined || home === undefined) {
          throw new Error(
            "gurt agent-run runs inside a task: BOX_SOCKET, BOX_TASK and HOME must be set",
          );
        }
        const endpoints = endpointsFromEnv((name) => Deno.env.get(name));
        if ("problem" in endpoints) {
          throw new Error(`gurt agent-run runs inside a task: ${endpoints.problem}`);
        }
        const adapter = adapterOf(agent as AgentName);
        const missing = await missingAgent(adapter);
        if (missing !== null) throw new Error(missing);
        const mcp = gurtInvocation(["mcp", "--wait-ms", String(MCP_WAIT_MS)]);
        const uid = Deno.uid();
        if (uid === null) throw new Error("agent-run: this system has no user ids");
        const args: AgentRunArgs = {
          agent: adapter.name,
          socket,
          home,
          uid,
          binary: agentBinary(adapter),
          mcp: {
            command: mcp.program,
            args: mcp.args,
            env: { BOX_SOCKET: socket, BOX_TASK: task },
          },
          endpoint: {
            anthropic: endpoints.anthropic.baseUrl,
            openai: endpoints.openai.baseUrl,
            placeholder: endpoints.anthropic.key,
          },
          mcpWaitMs: MCP_WAIT_MS,
          // The core gives a task FACTORY_API_KEY (its placeholder) only when the vault has one.
          services: { factory: Deno.env.get("FACTORY_API_KEY") !== undefined },
          // The core names the task's first workdir, where it runs, when it has one.
          ...(Deno.env.get("BOX_WORKDIR") === undefined
            ? {}
            : { workdir: Deno.env.get("BOX_WORKDIR") }),
        };
        const places = { socket, home, agentDir: agentDir(adapter), binary: args.binary };
        return await launchRole(ROLE_TABLE["agent-run"], { places, args });
      })
    );
}
