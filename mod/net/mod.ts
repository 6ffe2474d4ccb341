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
