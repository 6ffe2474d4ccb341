/**
 * The arguments of the four built-in tools (docs/grants.md#how-a-call-is-decided, step 4): parsed
 * strictly (unknown fields rejected), then checked for form. App tools' arguments are opaque here:
 * the core has already validated them against the tool's own schema.
 */
import { z } from "zod";
import { parseUrl, pathProblem } from "./forms.ts";
import { hostPortProblem, methodProblem, requestPath } from "./http_request.ts";
import type { BuiltinTool } from "./types.ts";

/** The JSON shape of each built-in tool's arguments, for validation and for publishing. */
export const BUILTIN_ARGUMENT_SCHEMAS = {
  read_file: z.strictObject({ path: z.string() }),
  write_file: z.strictObject({ path: z.string(), content: z.string() }),
  // `"cwd": null` means absent.
  shell: z.strictObject({ command: z.string(), cwd: z.string().nullable().optional() }),
  http_fetch: z.strictObject({ url: z.string() }),
} as const;

/** The JSON shape of an http.request call's arguments (docs/grants.md#httprequest). */
export const HTTP_REQUEST_ARGUMENT_SCHEMA = z.strictObject({
  method: z.string(),
  host: z.string(),
  path: z.string(),
});

/** read_file's parsed arguments. */
export type ReadFileArgs = { kind: "read_file"; path: string };
/** write_file's parsed arguments. */
export type WriteFileArgs = { kind: "write_file"; path: string; content: string };
/** shell's parsed arguments; `cwd` is null when absent. */
export type ShellArgs = { kind: "shell"; command: string; cwd: string | null };
/** http_fetch's parsed arguments, with the URL's host. */
export type HttpFetchArgs = { kind: "http_fetch"; url: string; host: string };
/**
 * An http.request call's arguments: the method, the host with `:PORT` where not 443, and the path
 * normalised as matched (encoded unreserved characters decoded, other encodings in uppercase hex):
 * the path to send, which a server reads as the one given. `segments` are the path's segments.
 */
export type HttpRequestArgs = {
  kind: "http_request";
  method: string;
  host: string;
  path: string;
  segments: readonly string[];
};
/** An app tool's arguments: opaque to policy, already validated by the core. */
export type AppArgs = { kind: "app"; input: unknown };

/** Any tool's parsed arguments, told apart by `kind`. */
export type ToolArgs =
  | ReadFileArgs
  | WriteFileArgs
  | ShellArgs
  | HttpFetchArgs
  | HttpRequestArgs
  | AppArgs;

/** The outcome of parsing a built-in tool's arguments. */
export type ArgsParse = { ok: true; args: ToolArgs } | { ok: false; problem: string };

/** Parses and form-checks a built-in tool's arguments. */
export function parseBuiltinArguments(tool: BuiltinTool, input: unknown): ArgsParse {
  switch (tool) {
    case "read_file": {
      const shape = BUILTIN_ARGUMENT_SCHEMAS.read_file.safeParse(input);
      if (!shape.success) return shapeProblem(tool);
      const problem = pathProblem(shape.data.path);
      if (problem !== null) return { ok: false, problem: `path ${problem}` };
      return { ok: true, args: { kind: "read_file", path: shape.data.path } };
    }
    case "write_file": {
      const shape = BUILTIN_ARGUMENT_SCHEMAS.write_file.safeParse(input);
      if (!shape.success) return shapeProblem(tool);
      const problem = pathProblem(shape.data.path);
      if (problem !== null) return { ok: false, problem: `path ${problem}` };
      const { path, content } = shape.data;
      return { ok: true, args: { kind: "write_file", path, content } };
    }
    case "shell": {
      const shape = BUILTIN_ARGUMENT_SCHEMAS.shell.safeParse(input);
      if (!shape.success) return shapeProblem(tool);
      const cwd = shape.data.cwd ?? null;
      if (cwd !== null) {
        const problem = pathProblem(cwd);
        if (problem !== null) return { ok: false, problem: `cwd ${problem}` };
      }
      return { ok: true, args: { kind: "shell", command: shape.data.command, cwd } };
    }
    case "http_fetch": {
      const shape = BUILTIN_ARGUMENT_SCHEMAS.http_fetch.safeParse(input);
      if (!shape.success) return shapeProblem(tool);
      const url = parseUrl(shape.data.url);
      if ("problem" in url) return { ok: false, problem: `url ${url.problem}` };
      return { ok: true, args: { kind: "http_fetch", url: shape.data.url, host: url.host } };
    }
  }
}

/** Parses and form-checks an http.request call's arguments `{method, host, path}`. */
export function parseHttpRequestArguments(input: unknown): ArgsParse {
  const shape = HTTP_REQUEST_ARGUMENT_SCHEMA.safeParse(input);
  if (!shape.success) {
    return {
      ok: false,
      problem: 'http.request takes exactly {"method": "GET", "host": "<host>", "path": "/..."}',
    };
  }
  const { method, host } = shape.data;
  const methodWrong = methodProblem(method);
  if (methodWrong !== null) return { ok: false, problem: `method ${methodWrong}` };
  const hostWrong = hostPortProblem(host);
  if (hostWrong !== null) return { ok: false, problem: `host ${hostWrong}` };
  const path = requestPath(shape.data.path);
  if ("problem" in path) return { ok: false, problem: `path ${path.problem}` };
  const segments = Object.freeze(path.segments);
  return { ok: true, args: { kind: "http_request", method, host, path: path.path, segments } };
}

/**
 * The parsed arguments serialised again, as the owner is shown them (docs/grants.md#approvals):
 * compact, the fields in the order below, an absent cwd left out. App tools' input as JSON.
 */
export function serialiseArguments(args: ToolArgs): string {
  switch (args.kind) {
    case "read_file":
      return JSON.stringify({ path: args.path });
    case "write_file":
      return JSON.stringify({ path: args.path, content: args.content });
    case "shell":
      return JSON.stringify(
        args.cwd === null ? { command: args.command } : { command: args.command, cwd: args.cwd },
      );
    case "http_fetch":
      return JSON.stringify({ url: args.url });
    case "http_request":
      return JSON.stringify({ method: args.method, host: args.host, path: args.path });
    case "app":
      return JSON.stringify(args.input) ?? "null";
  }
}

function shapeProblem(tool: BuiltinTool): ArgsParse {
  const fields = {
    read_file: '{"path": "<absolute path>"}',
    write_file: '{"path": "<absolute path>", "content": "<text>"}',
    shell: '{"command": "<text>", "cwd": "<absolute path>"} (cwd optional)',
    http_fetch: '{"url": "https://..."}',
  }[tool];
  return { ok: false, problem: `${tool} takes exactly ${fields}` };
}
