/**
 * The guest's error: one shape for every failure of every router (exec, files, host, computer
 * use), `{"error": {"code", "message", "status"}}`, and one style for its message: a single
 * lowercase sentence a caller can act on, naming the input that was wrong, clauses joined by ";",
 * no full stop, and the runbook pointer last where the guest fails closed.
 * tests/exec-guest/error_style_test.ts holds every router to it.
 */

/** The error codes (docs/guest-api.md#what-every-route-shares). */
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

  /** The response body: `{"error": {code, message, status}}`. */
  body(): { error: { code: GuestErrorCode; message: string; status: number } } {
    return { error: { code: this.code, message: this.message, status: this.status } };
  }
}
