/** Networking helpers shared by roles. */
export { type JsonAnswer, requestJson, requestRaw, SocketUnreachableError } from "./unix_http.ts";
