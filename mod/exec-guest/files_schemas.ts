/** The file routes' schemas. Paths are relative to the workspace or absolute under it. */
import { z } from "@hono/zod-openapi";

const Path = z.string().max(65_536).openapi({
  description: "relative to the workspace, or absolute under it; every escape is 400 path_escape",
  example: "notes/hello.txt",
});

const Flag = z.enum(["true", "false", "1", "0"]);

/** GET /v1/files. */
export const ReadQuery = z.strictObject({
  path: Path.optional().openapi({ description: "empty lists the workspace root" }),
  encoding: z.enum(["utf8", "base64"]).optional(),
});

/** A file, with its content. */
export const FileRead = z.object({
  kind: z.literal("file"),
  path: z.string(),
  size: z.number().int(),
  encoding: z.enum(["utf8", "base64"]),
  content: z.string(),
}).openapi("FileRead");

/** A directory, with its entries (truncated at BOX_MAX_DIR_ENTRIES). */
export const DirectoryRead = z.object({
  kind: z.literal("directory"),
  path: z.string(),
  entries: z.array(z.object({
    name: z.string(),
    kind: z.enum(["file", "directory", "symlink", "other"]),
    size: z.number().int(),
  })),
  truncated: z.boolean(),
}).openapi("DirectoryRead");

/** GET and PUT /v1/files/raw. */
export const RawQuery = z.strictObject({
  path: Path,
  create_dirs: Flag.optional(),
});

/** PUT /v1/files. */
export const WriteRequest = z.strictObject({
  path: Path,
  content: z.string(),
  encoding: z.enum(["utf8", "base64"]).optional(),
  create_dirs: z.boolean().optional(),
}).openapi("WriteRequest");

/** The answer of a write. */
export const WriteResult = z.object({
  path: z.string(),
  bytes_written: z.number().int(),
}).openapi("WriteResult");

/** DELETE /v1/files. */
export const DeleteQuery = z.strictObject({
  path: Path,
  recursive: Flag.optional(),
});

/** The answer of a delete. */
export const DeleteResult = z.object({ path: z.string(), deleted: z.boolean() }).openapi(
  "DeleteResult",
);

/** POST /v1/files/mkdir. */
export const MkdirRequest = z.strictObject({
  path: Path,
  parents: z.boolean().optional().openapi({ description: "default true" }),
}).openapi("MkdirRequest");

/** The answer of a mkdir: created is false if the directory already existed. */
export const MkdirResult = z.object({ path: z.string(), created: z.boolean() }).openapi(
  "MkdirResult",
);

/** POST /v1/files/move. */
export const MoveRequest = z.strictObject({ from: Path, to: Path }).openapi("MoveRequest");

/** The answer of a move. */
export const MoveResult = z.object({ from: z.string(), to: z.string() }).openapi("MoveResult");
