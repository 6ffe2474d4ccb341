/**
 * The decision path (docs/grants.md): grant files, argument forms, matching, decide and
 * redecide, the session state store, and the model-facing denial texts. Other modules import
 * only from here.
 */
export {
  type AppArgs,
  BUILTIN_ARGUMENT_SCHEMAS,
  HTTP_REQUEST_ARGUMENT_SCHEMA,
  type HttpFetchArgs,
  type HttpRequestArgs,
  type ReadFileArgs,
  type ShellArgs,
  type ToolArgs,
  type WriteFileArgs,
} from "./arguments.ts";
export {
  Ask,
  type AskWhy,
  canonicalArguments,
  decide,
  decideLoaded,
  type DecideOptions,
  Decision,
  explainDecision,
  type Explanation,
  type LoadedOptions,
  type Outcome,
  redecide,
  type Redecision,
} from "./decide.ts";
export { denialText } from "./denial_text.ts";
export {
  hostMatches,
  hostPatternProblem,
  hostProblem,
  parseUrl,
  pathInside,
  pathProblem,
} from "./forms.ts";
export {
  dormantGrants,
  type Grant,
  GRANT_ID,
  type GrantOptions,
  type GrantParse,
  type GrantProblem,
  isDormant,
  parseGrant,
} from "./grant_file.ts";
export {
  buildGrantSet,
  formatProblems,
  type GrantFile,
  type GrantLoad,
  type GrantSet,
  grantsInvalidReport,
  GrantsInvalidReporter,
} from "./grant_set.ts";
export {
  hostPortMatches,
  hostPortPatternProblem,
  hostPortProblem,
  methodProblem,
  pathPatternMatches,
  pathPatternProblem,
  type RequestPath,
  requestPath,
} from "./http_request.ts";
export { loadGrants } from "./load_grants.ts";
export { type Candidate, type Verdict } from "./matching.ts";
export {
  INITIAL_STATE,
  parseSessionState,
  raisedState,
  raiseSessionState,
  readSessionState,
  sessionStatePath,
  StateUnreadableError,
} from "./session_state.ts";
export { parseTimestamp } from "./timestamp.ts";
export {
  BUILTIN_TOOLS,
  type BuiltinTool,
  classRank,
  DATA_CLASSES,
  type DataClass,
  type Denial,
  type DenyReason,
  higherClass,
  HTTP_REQUEST_TOOL,
  isGurtGrantTool,
  type Label,
  type Mode,
  type SessionState,
  type ToolRequest,
  WORKDIR_TOOL,
} from "./types.ts";
