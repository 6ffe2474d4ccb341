/** Every tool the box knows: the built-ins, the tools in gurt's code and the installed apps', by name. */
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
  /** MCP's annotations as an app's server gave them, where it gave any. */
  annotations?: Readonly<Record<string, unknown>>;
}

/** One tool as `gurt tools` lists it: every tool of the box, a task's or not. */
export interface ToolEntry {
  name: string;
  description: string;
  /** True for a tool that changes nothing. */
  readOnly: boolean;
  /** What one call costs, in US cents; null where the input decides it (example.spend). */
  costCents: number | null;
  /** The app before the dot (`example`, an installed app), or null for a built-in tool. */
  app: string | null;
  /** The input's JSON Schema. */
  input: unknown;
}

/**
 * Tools that come and go while the core runs: the installed apps' (mod/apps). `tools()` returns the
 * same map until the set changes, so the registry may keep what it made of it.
 */
export interface ToolSource {
  tools(): ReadonlyMap<string, AppTool<never>>;
  /**
   * Every tool name of the source, offered or not (a turned-off app's too), the same set until it
   * changes: what a grant may name. Without it, the offered tools' names.
   */
  names?(): ReadonlySet<string>;
  /** Why `name`, a name of this source's form, is not offered now, in a sentence. */
  whyNotOffered?(name: string): string;
}

/** The tools of the box. */
export class ToolRegistry {
  readonly #code = new Map<string, AppTool<never>>();
  readonly #source: ToolSource | null;
  #seen: { keys(): Iterable<string> } | null = null;
  #names: ReadonlySet<string>;

  constructor(apps: readonly AppTool<never>[], source: ToolSource | null = null) {
    for (const tool of apps) {
      if (this.#code.has(tool.name) || isBuiltin(tool.name)) {
        throw new Error(`tool ${tool.name} is declared twice`);
      }
      this.#code.set(tool.name, tool);
    }
    this.#source = source;
    this.#names = new Set(this.#code.keys());
  }

  /** The names of the apps' tools, for the grant loader's rule 3: one set while they stay the same. */
  appToolNames(): ReadonlySet<string> {
    // A turned-off app's tools are still real tools: a grant of one stays valid while it is off.
    const known = this.#source?.names?.() ?? this.#source?.tools() ?? null;
    if (known !== null && known !== this.#seen) {
      this.#seen = known;
      // A tool in gurt's code keeps its name: an app cannot take it over.
      this.#names = new Set([...this.#code.keys(), ...known.keys()]);
    }
    return this.#names;
  }

  /**
   * Why `name`, neither a built-in nor a tool offered now, cannot be called: its app was turned
   * off or removed, or its server no longer lists it.
   */
  notOffered(name: string): string {
    return this.#source?.whyNotOffered?.(name) ??
      `${name} is not offered: no installed app offers it; see runbook.md#app-tool-not-offered`;
  }

  /** Whether `name` is a tool of the box. */
  has(name: string): boolean {
    return isBuiltin(name) || this.app(name) !== undefined;
  }

  /** The app tool called `name`, if it is one. */
  app(name: string): AppTool<unknown> | undefined {
    const tool = this.#code.get(name) ?? this.#source?.tools().get(name);
    return tool as AppTool<unknown> | undefined;
  }

  /** Every tool offered now, the built-ins first, then the others by name, for `gurt tools`. */
  catalog(): ToolEntry[] {
    const others = new Set([...this.#code.keys(), ...(this.#source?.tools().keys() ?? [])]);
    const names = [...BUILTIN_TOOLS, ...[...others].sort()];
    return this.list(names).map((listing): ToolEntry => {
      const builtin = isBuiltin(listing.name);
      return {
        name: listing.name,
        description: listing.description,
        readOnly: listing.readOnly,
        costCents: builtin ? 0 : fixedCost(this.app(listing.name)),
        app: builtin ? null : listing.name.slice(0, listing.name.indexOf(".")),
        input: listing.input,
      };
    });
  }

  /** The listings of the named tools, in the order given, for GET /tools. */
  list(names: readonly string[]): ToolListing[] {
    return names.flatMap((name): ToolListing[] => {
      const builtin = builtinTools.find((tool) => tool.name === name);
      if (builtin !== undefined) {
        return [{
          name,
          description: builtin.description,
          input: z.toJSONSchema(builtin.input, { io: "input" }),
          readOnly: builtin.readOnly,
        }];
      }
      const tool = this.app(name);
      // A task's app tool whose app was removed since the task started is no longer offered.
      if (tool === undefined) return [];
      const input = tool.inputSchema ??
        (tool.input instanceof z.ZodType ? z.toJSONSchema(tool.input, { io: "input" }) : {});
      return [{
        name,
        description: tool.description,
        input,
        readOnly: tool.readOnly === true,
        ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
      }];
    });
  }
}

/** A tool's cost when it is the same for every input (an app's), else null; free without one. */
function fixedCost(tool: AppTool<unknown> | undefined): number | null {
  if (tool?.cost === undefined) return 0;
  try {
    // A cost that reads its input fails on none: the input decides it.
    const cents = tool.cost(undefined);
    return Number.isSafeInteger(cents) && cents >= 0 ? cents : null;
  } catch {
    return null;
  }
}

/** Whether `name` is one of the four built-in tools. */
export function isBuiltin(name: string): boolean {
  return (BUILTIN_TOOLS as readonly string[]).includes(name);
}

/** The registry of a standard box: the built-ins and the example app, and the installed apps'. */
export function standardRegistry(source: ToolSource | null = null): ToolRegistry {
  return new ToolRegistry(exampleApp, source);
}
