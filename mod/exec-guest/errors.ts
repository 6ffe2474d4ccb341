/** The guest's error: one shape for every failure, `{"error": {"code", "message", "status"}}`. */

/** The error codes of seed 004. */
export type GuestErrorCode =
  | "unauthorized"
  | "invalid_request"
  | "path_escape"
  | "not_found"
  | "payload_too_large"
  | "exec_failed"
  | "io_error"
  | "internal"
  | "not_ready"
  | "cua_disabled"
  | "display_unavailable"
  | "out_of_range"
  | "cua_backend"
  | "busy";

/** Thrown by any guest handler; the guest's one error handler turns it into the response. */
export class GuestError extends Error {
  constructor(readonly code: GuestErrorCode, readonly status: number, message: string) {
    super(message);
    this.name = "GuestError";
  }

  /** The response body of seed 004. */
  body(): { error: { code: GuestErrorCode; message: string; status: number } } {
    return { error: { code: this.code, message: this.message, status: this.status } };
  }
}
