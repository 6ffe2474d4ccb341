/** Networking helpers shared by roles. */
export {
  type JsonAnswer,
  forgetSocket,
  requestJson,
  SOCKET_HOST,
  SOCKET_HOST_PERMISSION,
  SocketUnreachableError,
} from "./unix_http.ts";
