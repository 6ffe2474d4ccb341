/**
 * The CUA failures (docs/guest-api.md#what-every-route-shares) as GuestErrors, each a sentence a
 * caller can act on.
 */
import { GuestError } from "../exec-guest/mod.ts";

/** 503 cua_disabled: BOX_CUA=0. */
export function cuaDisabled(): GuestError {
  return new GuestError(
    "cua_disabled",
    503,
    "computer use is turned off on this box (BOX_CUA=0); see runbook.md#cua-disabled",
  );
}

/** 503 cua_disabled: the guest runs without --desktop, so there is no desktop to use. */
export function noDesktop(): GuestError {
  return new GuestError(
    "cua_disabled",
    503,
    "computer use is not running: the guest was started without --desktop; " +
      "see runbook.md#cua-disabled",
  );
}

/** 503 display_unavailable: the X server does not answer. */
export function displayUnavailable(display: string, reason: string): GuestError {
  return new GuestError(
    "display_unavailable",
    503,
    `the X display ${display} is not answering (${reason}); see runbook.md#desktop-display-unavailable`,
  );
}

/** 502 cua_backend: the X server answered but the request failed. */
export function cuaBackend(what: string, reason: string): GuestError {
  return new GuestError(
    "cua_backend",
    502,
    `${what} failed on the X server (${reason}); see runbook.md#cua-backend`,
  );
}

/** 502 cua_backend: ffmpeg could not record or remux. */
export function recordingFailed(reason: string): GuestError {
  return new GuestError(
    "cua_backend",
    502,
    `the recording failed (${reason}); see runbook.md#cua-recording-failed`,
  );
}

/** 400 out_of_range: a coordinate outside the framebuffer. */
export function outOfRange(message: string): GuestError {
  return new GuestError("out_of_range", 400, message);
}

/** 400 invalid_request. */
export function invalidRequest(message: string): GuestError {
  return new GuestError("invalid_request", 400, message);
}

/** 400 path_escape: an artifact_dir outside the workspace. */
export function pathEscape(path: string): GuestError {
  return new GuestError(
    "path_escape",
    400,
    `artifact_dir ${JSON.stringify(path)} is outside the workspace; give a path inside it`,
  );
}
