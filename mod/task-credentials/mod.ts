/**
 * A task's credential doors (docs/credentials.md): the box's end of a task's HTTPS to the host of
 * one of its credential rules, where a request carrying the task's placeholder is decided as a call
 * of `http.request` and sent with the owner's credential only if allowed. Other modules import
 * only from here.
 */
export {
  credentialDoor,
  type CredentialDoorOptions,
  type CredentialRefusal,
  type DecidedRequest,
} from "./credential_door.ts";
export { bodyPreview, PREFIX_BYTES, PREVIEW_BYTES, readPrefix } from "./request_body.ts";
export { type BodyTotals, countedBody } from "./response_body.ts";
