/** The file routes: read, raw GET and PUT, write, delete, mkdir, move; all inside the jail. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { errorResponses } from "./exec_schemas.ts";
import {
  deletePath,
  type FileLimits,
  fromBase64,
  makeDirectory,
  movePath,
  openRaw,
  readPath,
  type Workspace,
  writePath,
} from "./files_ops.ts";
import {
  DeleteQuery,
  DeleteResult,
  DirectoryRead,
  FileRead,
  MkdirRequest,
  MkdirResult,
  MoveRequest,
  MoveResult,
  RawQuery,
  ReadQuery,
  WriteRequest,
  WriteResult,
} from "./files_schemas.ts";
import { type CachedBody, type GuestEnv, newRouter, readCapped } from "./middleware.ts";

/** What the file routes run with: the workspace (its jail and files helper) and the limits. */
export interface FilesDeps extends FileLimits, Workspace {}

const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });
const PATH_ERRORS = [400, 401, 404, 409, 413, 500, 503];

const readRoute = createRoute({
  method: "get",
  path: "/",
  summary: "Read a file (utf8 or base64) or list a directory",
  request: { query: ReadQuery },
  responses: {
    200: {
      description: "the file or the directory",
      ...json(z.discriminatedUnion("kind", [FileRead, DirectoryRead])),
    },
    ...errorResponses(PATH_ERRORS),
  },
});

const rawGetRoute = createRoute({
  method: "get",
  path: "/raw",
  summary: "A file's raw bytes",
  request: { query: RawQuery },
  responses: {
    200: {
      description: "the bytes",
      content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
    },
    ...errorResponses(PATH_ERRORS),
  },
});

const rawPutRoute = createRoute({
  method: "put",
  path: "/raw",
  summary: "Write a file from raw bytes (at most BOX_MAX_FILE_BYTES)",
  request: {
    query: RawQuery,
    body: {
      content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
  responses: {
    200: { description: "written", ...json(WriteResult) },
    ...errorResponses(PATH_ERRORS),
  },
});

const writeRoute = createRoute({
  method: "put",
  path: "/",
  summary: "Write a file from utf8 or base64 content (at most BOX_MAX_FILE_BYTES)",
  request: { body: { ...json(WriteRequest), required: true } },
  responses: {
    200: { description: "written", ...json(WriteResult) },
    ...errorResponses(PATH_ERRORS),
  },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/",
  summary: "Delete a file or directory; non-empty directories need recursive=true; never the root",
  request: { query: DeleteQuery },
  responses: {
    200: { description: "deleted", ...json(DeleteResult) },
    ...errorResponses(PATH_ERRORS),
  },
});

const mkdirRoute = createRoute({
  method: "post",
  path: "/mkdir",
  summary: "Make a directory (parents default true); created is false if it existed",
  request: { body: { ...json(MkdirRequest), required: true } },
  responses: {
    200: { description: "the directory", ...json(MkdirResult) },
    ...errorResponses(PATH_ERRORS),
  },
});

const moveRoute = createRoute({
  method: "post",
  path: "/move",
  summary: "Move a file or directory; the destination must not exist; never the root",
  request: { body: { ...json(MoveRequest), required: true } },
  responses: {
    200: { description: "moved", ...json(MoveResult) },
    ...errorResponses(PATH_ERRORS),
  },
});

/** The /v1/files router. */
export function filesRouter(deps: FilesDeps): OpenAPIHono<GuestEnv> {
  const router = newRouter();

  router.openapi(readRoute, async (c) => {
    const query = c.req.valid("query");
    const answer = await readPath(deps, {
      ...deps,
      path: query.path ?? "",
      encoding: query.encoding ?? "utf8",
    });
    return c.json(answer, 200);
  });

  router.openapi(rawGetRoute, async (c) => {
    const bytes = await openRaw(deps, c.req.valid("query").path);
    return new Response(bytes, {
      status: 200,
      headers: { "content-type": "application/octet-stream" },
    });
  });

  router.openapi(rawPutRoute, async (c) => {
    const query = c.req.valid("query");
    const cached = (c.req.bodyCache as unknown as CachedBody).arrayBuffer;
    const bytes = cached !== undefined
      ? new Uint8Array(await cached)
      : await readCapped(c.req.raw, deps.maxFileBytes);
    const written = await writePath(deps, {
      path: query.path,
      bytes,
      createDirs: query.create_dirs === "true" || query.create_dirs === "1",
      maxFileBytes: deps.maxFileBytes,
    });
    return c.json(written, 200);
  });

  router.openapi(writeRoute, async (c) => {
    const body = c.req.valid("json");
    const bytes = body.encoding === "base64"
      ? fromBase64(body.content)
      : new TextEncoder().encode(body.content);
    const written = await writePath(deps, {
      path: body.path,
      bytes,
      createDirs: body.create_dirs ?? false,
      maxFileBytes: deps.maxFileBytes,
    });
    return c.json(written, 200);
  });

  router.openapi(deleteRoute, async (c) => {
    const query = c.req.valid("query");
    const recursive = query.recursive === "true" || query.recursive === "1";
    return c.json(await deletePath(deps, { path: query.path, recursive }), 200);
  });

  router.openapi(mkdirRoute, async (c) => {
    const body = c.req.valid("json");
    return c.json(
      await makeDirectory(deps, { path: body.path, parents: body.parents ?? true }),
      200,
    );
  });

  router.openapi(moveRoute, async (c) => {
    const body = c.req.valid("json");
    return c.json(await movePath(deps, { from: body.from, to: body.to }), 200);
  });

  return router;
}
