/** The loop's choice of model service, and where it sends a request, from its task's environment. */
import { assertEquals } from "../assert.ts";
import {
  endpointHosts,
  endpointsFromEnv,
  type ModelEndpoints,
  modelRequestTarget,
  modelService,
} from "../../mod/loop/mod.ts";

Deno.test("claude-* models go to Anthropic, every other model to OpenAI", () => {
  for (const model of ["claude-sonnet-5-5", "claude-haiku-4-5", "claude-opus-4-5-20251101"]) {
    assertEquals(modelService(model), "anthropic", model);
  }
  for (const model of ["gpt-5", "o3", "ornith-1.5", "llama-3-claude", "Claude-3", "claude"]) {
    assertEquals(modelService(model), "openai", model);
  }
});

/** The environment a task's worker gets (mod/sandbox's modelEnv). */
const TASK_ENV: Record<string, string> = {
  ANTHROPIC_BASE_URL: "http://127.0.0.1:4100",
  OPENAI_BASE_URL: "http://127.0.0.1:4100/v1",
  ANTHROPIC_API_KEY: "gurt-placeholder-key",
  OPENAI_API_KEY: "gurt-placeholder-key",
};

Deno.test("a task's environment gives each service's endpoint, and the request goes where its SDK would send it", () => {
  const endpoints = endpointsFromEnv((name) => TASK_ENV[name]) as ModelEndpoints;
  assertEquals(endpointHosts(endpoints), ["127.0.0.1:4100"]);
  assertEquals(modelRequestTarget("anthropic", endpoints), {
    url: "http://127.0.0.1:4100/v1/messages",
    headers: {
      "content-type": "application/json",
      "x-api-key": "gurt-placeholder-key",
      "anthropic-version": "2023-06-01",
    },
  });
  assertEquals(modelRequestTarget("openai", endpoints), {
    url: "http://127.0.0.1:4100/v1/chat/completions",
    headers: { "content-type": "application/json", authorization: "Bearer gurt-placeholder-key" },
  });
  const slashed = endpointsFromEnv((name) =>
    name === "OPENAI_BASE_URL" ? "http://127.0.0.1:4101/v1/" : TASK_ENV[name]
  ) as ModelEndpoints;
  assertEquals(
    modelRequestTarget("openai", slashed).url,
    "http://127.0.0.1:4101/v1/chat/completions",
  );
  assertEquals(endpointHosts(slashed), ["127.0.0.1:4100", "127.0.0.1:4101"]);
});

Deno.test("an environment without an endpoint or its key names the variable", () => {
  for (
    const [name, value, says] of [
      ["ANTHROPIC_BASE_URL", undefined, "ANTHROPIC_BASE_URL must name the task's model endpoint"],
      [
        "OPENAI_BASE_URL",
        "127.0.0.1:4100",
        'OPENAI_BASE_URL must name the task\'s model endpoint, an http URL such as http://127.0.0.1:4100, not "127.0.0.1:4100"',
      ],
      ["OPENAI_API_KEY", "", "OPENAI_API_KEY must be set"],
    ] as const
  ) {
    const found = endpointsFromEnv((n) => (n === name ? value : TASK_ENV[n]));
    assertEquals("problem" in found && found.problem.startsWith(says), true, JSON.stringify(found));
  }
});
