/**
 * Stand-ins for the model services (Anthropic Messages, OpenAI Responses, Chat Completions): the
 * scripted wire code the agent tests drive real agents with (anthropic.ts, responses.ts, chat.ts,
 * which the tests import directly), and `gurt dev model-stand-in`, which serves all three on one
 * loopback port so a person can try gurt offline (stand_in.ts, entry stand_in_main.ts).
 */
export { type StandIn, type StandInOptions, startStandIn } from "./stand_in.ts";
export type { StandInArgs } from "./stand_in_main.ts";
