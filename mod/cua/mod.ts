/**
 * Computer use in the guest (docs/guest-api.md#host-desktop-and-computer-use): the X desktop and
 * its supervisor, screenshots, XTEST input, batch recipes with observation and recording, and the
 * desktop status routes.
 */
export { createDesktop, type Desktop, desktopOff } from "./desktop.ts";
export {
  type DesktopOptions,
  desktopOptionsFromEnv,
  displayFromEnv,
  parseGeometry,
} from "./options.ts";
