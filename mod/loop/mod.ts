/** The worker role's turn loop (`gurt loop`): conversation, wire formats, core tools. */
export { callKey, type Message, type Reply, resume, turnsIn } from "./conversation.ts";
export { CORE_TOOLS, runCoreTool } from "./core_tools.ts";
export type { LoopArgs } from "./loop_main.ts";
export {
  endpointHosts,
  endpointsFromEnv,
  type ModelEndpoints,
  modelRequestTarget,
  type ModelService,
  modelService,
} from "./model_service.ts";
