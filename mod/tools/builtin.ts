/**
 * The four built-in tools (docs/grants.md#how-a-call-is-decided, step 4). Their arguments are
 * parsed strictly by mod/policy; these schemas are what /tools publishes, and they say the same
 * thing.
 */
import { z } from "zod";

/** The names of the built-in tools. */
export const BUILTIN_TOOLS = ["read_file", "write_file", "shell", "http_fetch"] as const;

/** One built-in tool's published description. */
export interface BuiltinTool {
  name: (typeof BUILTIN_TOOLS)[number];
  description: string;
  input: z.ZodType;
  /** True for a tool that changes nothing (see AppTool's readOnly). */
  readOnly: boolean;
}

const absolute = z.string().startsWith("/").max(4096);

/** The built-in tools with their descriptions and input schemas. */
export const builtinTools: readonly BuiltinTool[] = [
  {
    name: "read_file",
    description: "Reads a file under a granted path.",
    readOnly: true,
    input: z.strictObject({ path: absolute }),
  },
  {
    name: "write_file",
    description: "Writes text to a file under a granted path.",
    readOnly: false,
    input: z.strictObject({ path: absolute, content: z.string() }),
  },
  {
    name: "shell",
    description: "Runs a shell command in a sandbox, optionally in a granted directory.",
    readOnly: false,
    input: z.strictObject({ command: z.string(), cwd: absolute.optional() }),
  },
  {
    name: "http_fetch",
    description: "Fetches an https URL on a granted host.",
    // A GET, which HTTP holds to be safe: it changes nothing that the box answers for.
    readOnly: true,
    input: z.strictObject({ url: z.string().startsWith("https://").max(2048) }),
  },
];
