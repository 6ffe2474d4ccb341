/**
 * Computer use in the guest (seed 004): the X desktop and its supervisor, screenshots, XTEST
 * input, batch recipes with observation and recording, and the desktop status routes.
 */
export { createDesktop, type Desktop, desktopOff } from "./desktop.ts";
export {
  type DesktopOptions,
  desktopOptionsFromEnv,
  displayFromEnv,
  parseGeometry,
} from "./options.ts";
