import { assertEquals, assertThrows } from "../assert.ts";
import { desktopOptionsFromEnv, parseGeometry } from "../../mod/cua/mod.ts";

const places = { workspace: "/workspace", home: "/home/box" };

Deno.test("with no settings the desktop has its defaults: :1, 1280x800x24, CUA on, no VNC", () => {
  const options = desktopOptionsFromEnv({}, places);
  assertEquals(
    [options.display, options.geometry, options.cua, options.vncPassword, options.cdpPort],
    [":1", "1280x800x24", true, null, 9222],
  );
  assertEquals(options.chromeProfile, "/home/box/chrome-profile");
  assertEquals([options.vncPort, options.viewerPort], [5900, 6080]);
});

Deno.test("BOX_CUA=0 turns computer use off, and the display settings are read", () => {
  const options = desktopOptionsFromEnv({
    BOX_CUA: "0",
    BOX_DISPLAY: ":7",
    BOX_DISPLAY_GEOM: "1024x768x24",
    BOX_VNC_PASSWORD: "hunter22",
  }, places);
  assertEquals(
    [options.cua, options.display, options.geometry, options.vncPassword],
    [false, ":7", "1024x768x24", "hunter22"],
  );
});

Deno.test("the VNC password may come from BOX_VNC_PASSWORD_FILE, first line only", async () => {
  const file = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(file, "from-file\nignored\n");
    assertEquals(
      desktopOptionsFromEnv({ BOX_VNC_PASSWORD_FILE: file }, places).vncPassword,
      "from-file",
    );
    assertThrows(
      () => desktopOptionsFromEnv({ BOX_VNC_PASSWORD_FILE: `${file}.missing` }, places),
      Error,
      "could not be read",
    );
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("a bad display or geometry is refused with the variable named", () => {
  assertThrows(
    () => desktopOptionsFromEnv({ BOX_DISPLAY: "host:0" }, places),
    Error,
    "BOX_DISPLAY",
  );
  assertThrows(
    () => desktopOptionsFromEnv({ BOX_DISPLAY_GEOM: "1280x800" }, places),
    Error,
    "BOX_DISPLAY_GEOM",
  );
  assertEquals(parseGeometry("640x480x16"), { width: 640, height: 480, depth: 16 });
});

Deno.test("BOX_CDP_PORT and BOX_CHROME_PROFILE give a second guest its own DevTools port and profile", () => {
  const mine = desktopOptionsFromEnv({}, places);
  assertEquals([mine.cdpPort, mine.chromeProfile], [9222, "/home/box/chrome-profile"]);
  const other = desktopOptionsFromEnv(
    { BOX_CDP_PORT: "9333", BOX_CHROME_PROFILE: "/srv/guest-b/profile/" },
    places,
  );
  assertEquals([other.cdpPort, other.chromeProfile], [9333, "/srv/guest-b/profile"]);
  for (const port of ["0", "65536", "92a", "-1"]) {
    assertThrows(
      () => desktopOptionsFromEnv({ BOX_CDP_PORT: port }, places),
      Error,
      "BOX_CDP_PORT",
    );
  }
  for (const profile of ["profile", "/a/../b"]) {
    assertThrows(
      () => desktopOptionsFromEnv({ BOX_CHROME_PROFILE: profile }, places),
      Error,
      "BOX_CHROME_PROFILE",
    );
  }
});
