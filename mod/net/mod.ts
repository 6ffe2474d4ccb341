/** Networking helpers shared by roles. */
export {
  forgetSocket,
  type JsonAnswer,
  requestJson,
  requestStream,
  SOCKET_HOST,
  SOCKET_HOST_PERMISSION,
  SocketUnreachableError,
} from "./unix_http.ts";
export { sseData } from "./sse.ts";
