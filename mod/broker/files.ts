/** Moved to mod/common (issue 22): kept for the broker files that still import it from here. */
export { appendLineSynced, writeLine } from "../common/mod.ts";
