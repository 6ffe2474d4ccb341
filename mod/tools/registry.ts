/** Every tool the box knows: the built-ins and the apps' tools, by name. */
import { z } from "zod";
import { BUILTIN_TOOLS, builtinTools } from "./builtin.ts";
import { exampleApp } from "./example_app.ts";
import type { AppTool } from "./tool.ts";

/** What /tools publishes for one tool. */
export interface ToolListing {
  name: string;
  description: string;
  input: unknown;
  /** True for a tool that changes nothing; false for one that may change things. */
  readOnly: boolean;
}

/** The tools of the box. */
export class ToolRegistry {
  readonly #apps = new Map<string, AppTool<never>>();
  readonly #appNames: ReadonlySet<string>;

  constructor(apps: readonly AppTool<never>[]) {
    for (const tool of apps) {
      if (this.#apps.has(tool.name) || isBuiltin(tool.name)) {
        throw new Error(`tool ${tool.name} is declared twice`);
      }
      this.#apps.set(tool.name, tool);
    }
    this.#appNames = new Set(this.#apps.keys());
  }

  /** The names of the apps' tools, for the grant loader's rule 3: one set, made once. */
  appToolNames(): ReadonlySet<string> {
    return this.#appNames;
  }

  /** Whether `name` is a tool of the box. */
  has(name: string): boolean {
    return isBuiltin(name) || this.#apps.has(name);
  }

  /** The app tool called `name`, if it is one. */
  app(name: string): AppTool<unknown> | undefined {
    return this.#apps.get(name) as AppTool<unknown> | undefined;
  }

  /** The listings of the named tools, in the order given, for GET /tools. */
  list(names: readonly string[]): ToolListing[] {
    return names.map((name) => {
      const builtin = builtinTools.find((tool) => tool.name === name);
      const tool = builtin ?? this.#apps.get(name);
      if (tool === undefined) throw new Error(`unknown tool ${name}`);
      return {
        name,
        description: tool.description,
        input: z.toJSONSchema(tool.input, { io: "input" }),
        readOnly: tool.readOnly === true,
      };
    });
  }
}

/** Whether `name` is one of the four built-in tools. */
export function isBuiltin(name: string): boolean {
  return (BUILTIN_TOOLS as readonly string[]).includes(name);
}

/** The registry of a standard box: the built-ins and the example app. */
export function standardRegistry(): ToolRegistry {
  return new ToolRegistry(exampleApp);
}
