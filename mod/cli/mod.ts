/** The `gurt` command line: the commander program and what runs before it parses. */
export { buildProgram } from "./program.ts";
export { beforeCommand } from "./task_command.ts";
