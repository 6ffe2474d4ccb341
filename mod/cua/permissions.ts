/**
 * What the desktop adds to the guest's permissions (mod/exec-guest/permissions.ts), as data: the
 * X socket (the x11 package connects over it, which Deno counts as net), the workspace for
 * artifacts and the Chromium profile's folder, and unscoped `run` for its programs.
 */
import { type DesktopOptions, socketOf } from "./options.ts";

/** The permission entries the desktop needs beyond the guest's own. */
export function desktopPermissionNeeds(options: DesktopOptions): {
  read: string[];
  write: string[];
  net: string[];
  sys: ("hostname" | "homedir")[];
  run: true;
} {
  const profile = options.chromeProfile === null ? [] : [options.chromeProfile];
  return {
    read: [options.workspace, "/tmp/.X11-unix", ...profile],
    write: [options.workspace, socketOf(options.display), ...profile],
    net: [`unix:${socketOf(options.display)}`, "127.0.0.1", options.viewerHost],
    // The x11 package reads the host name and home for X authority, and hangs without them.
    sys: ["hostname", "homedir"],
    // Xvfb, setxkbmap, openbox, chromium, x11vnc, websockify, ffmpeg; and stopping a program's
    // whole process group (Deno.kill of -pid) needs run unscoped.
    run: true,
  };
}
