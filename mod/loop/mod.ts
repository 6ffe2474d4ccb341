/** The worker role's turn loop (`gurt loop`): conversation, wire formats, core tools. */
export { callKey, type Message, type Reply, resume, turnsIn } from "./conversation.ts";
export { CORE_TOOLS, runCoreTool } from "./core_tools.ts";
export type { LoopArgs } from "./loop_main.ts";
export { workerPermissions } from "./permissions.ts";

/** The loop's entry module, run in the worker role, for runRole. */
export const loopEntry: URL = new URL("./loop_main.ts", import.meta.url);
