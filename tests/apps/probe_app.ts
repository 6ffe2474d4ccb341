/**
 * A module app for tests/apps/app_host_test.ts: tools that report what the app host gave them
 * (its environment, a key's value, the signal of a call) and what its role lets them do.
 */
import type { AppTool, AppTools } from "../../mod/apps/app_sdk.ts";

const signals = new Map<string, AbortSignal>();

const envProbe: AppTool<Record<string, never>> = {
  name: "env_probe",
  description: "Says whether the host's environment still holds the NOTES_TOKEN, by name or value.",
  readOnly: true,
  secrets: ["NOTES_TOKEN"],
  input: { type: "object" },
  run: (ctx) => {
    const value = ctx.secret("NOTES_TOKEN");
    const env = Deno.env.toObject();
    return {
      secretNames: Object.keys(env).filter((name) => name.startsWith("GURT_APP_SECRET_")),
      holdsValue: Object.values(env).some((text) => text.includes(value)),
      valueLength: value.length,
      home: ctx.home,
    };
  },
};

const readUndeclared: AppTool<Record<string, never>> = {
  name: "read_undeclared",
  description: "Reads NOTES_TOKEN without declaring it.",
  input: { type: "object" },
  run: (ctx) => ctx.secret("NOTES_TOKEN"),
};

const fail: AppTool<Record<string, never>> = {
  name: "fail",
  description: "Throws.",
  input: { type: "object" },
  run: () => {
    throw new Error("the probe failed on purpose");
  },
};

const waitForCancel: AppTool<Record<string, never>> = {
  name: "wait_for_cancel",
  description: "Waits until its call is cancelled.",
  input: { type: "object" },
  run: (ctx) => {
    signals.set(ctx.key, ctx.signal);
    ctx.log(`waiting ${ctx.key}`);
    return new Promise((resolve) => {
      ctx.signal.addEventListener("abort", () => {
        ctx.log(`cancelled ${ctx.key}`);
        resolve("cancelled");
      });
    });
  },
};

const signalState: AppTool<{ key: string }> = {
  name: "signal_state",
  description: "Says whether the signal of the call with this key has aborted.",
  readOnly: true,
  input: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  run: (_ctx, input) => ({
    seen: signals.has(input.key),
    aborted: signals.get(input.key)?.aborted ?? false,
  }),
};

const act: AppTool<{ fetch?: string; write?: string; run?: string }> = {
  name: "act",
  description: "Fetches a URL, writes a file or runs a program, and says what happened.",
  input: {
    type: "object",
    properties: { fetch: { type: "string" }, write: { type: "string" }, run: { type: "string" } },
    additionalProperties: false,
  },
  run: async (_ctx, input) => {
    try {
      if (input.fetch !== undefined) return `fetched: ${await (await fetch(input.fetch)).text()}`;
      if (input.write !== undefined) {
        await Deno.writeTextFile(input.write, "written");
        return "written";
      }
      if (input.run !== undefined) {
        await new Deno.Command(input.run).output();
        return "ran";
      }
      return "nothing";
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`;
    }
  },
};

const built: AppTool<Record<string, never>> = {
  name: "built",
  description: "Returns an MCP result it builds itself.",
  input: { type: "object" },
  run: () => ({ content: [{ type: "text", text: "built by the tool" }], isError: true }),
};

export const tools = [
  envProbe,
  readUndeclared,
  fail,
  waitForCancel,
  signalState,
  act,
  built,
] satisfies AppTools;
