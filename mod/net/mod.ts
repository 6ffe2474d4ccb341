/** Networking helpers shared by roles. */
export {
  closeKeptConnections,
  type JsonAnswer,
  requestJson,
  requestRaw,
  requestStream,
  SocketUnreachableError,
} from "./unix_http.ts";
export { readRequestBody } from "./read_body.ts";
export { sseData } from "./sse.ts";
export { type CallResponse, postCall } from "./task_call.ts";
export { acceptConnections, type AcceptOptions } from "./accept_loop.ts";
export { IncompleteBodyError, incompleteBodyMessage } from "./fetch_bridge.ts";
export {
  type ConnInfo,
  errorAnswer,
  type FetchHandler,
  GUARD_DEFAULTS,
  type GuardedServer,
  type GuardOptions,
  type ListenAt,
  serveGuarded,
  serveGuardedOn,
} from "./guarded_server.ts";
