/**
 * Computer use in the guest (seed 004): the X desktop and its supervisor, screenshots, XTEST
 * input, batch recipes with observation and recording, and the desktop status routes.
 */
export { createDesktop, type Desktop } from "./desktop.ts";
export { type DesktopOptions, desktopOptionsFromEnv, parseGeometry } from "./options.ts";
export { desktopPermissionNeeds } from "./permissions.ts";
