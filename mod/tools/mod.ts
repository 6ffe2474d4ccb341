/** Tools: how they are declared, the example app, the built-ins, and the registry. */
export { type AppTool, defineTool, type InputCheck, type ToolContext } from "./tool.ts";
export { BUILTIN_TOOLS, builtinTools } from "./builtin.ts";
export { exampleApp } from "./example_app.ts";
export {
  isBuiltin,
  standardRegistry,
  type ToolEntry,
  type ToolListing,
  ToolRegistry,
  type ToolSource,
} from "./registry.ts";
export { appendNote, type NoteAnswer, notesPath } from "./notes.ts";
