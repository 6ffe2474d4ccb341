/** `gurt guest --desktop` as a user runs it: one process, both services, the desktop, and a clean stop. */
import { assert, assertEquals } from "../assert.ts";
import { guestArgs, gurtArgs } from "../kit/mod.ts";
import { freeDisplay } from "./fixture.ts";

const XVFB = (() => {
  try {
    return Deno.statSync("/usr/bin/Xvfb").isFile;
  } catch {
    return false;
  }
})();
if (!XVFB) console.log("tests/cua/guest_desktop_test.ts: Xvfb is not installed; skipped.");

const TOKEN = "guest-desktop-test-token";

Deno.test({
  name:
    "gurt guest --desktop serves computer use on the host port and stops its desktop on shutdown",
  ignore: !XVFB,
  async fn() {
    const workspace = await Deno.makeTempDir({ prefix: "gurt-gd-" });
    const home = await Deno.makeTempDir({ prefix: "gurt-gd-home-" });
    const display = freeDisplay(); // one no other test's Xvfb holds
    const child = new Deno.Command(Deno.execPath(), {
      args: gurtArgs(["guest", ...guestArgs(workspace, ["--desktop"])]),
      env: { BOX_TOKEN: TOKEN, BOX_DISPLAY: display, HOME: home },
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      let text = "";
      while (!text.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error("gurt guest ended before it listened");
        text += value;
      }
      const line = JSON.parse(text.split("\n")[0]);
      const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
      const info = await (await fetch(`${line.host}/v1/info`, { headers: auth })).json();
      assertEquals(info.capabilities.cua, { enabled: true, ready: true });
      assertEquals(info.capabilities.desktop, { enabled: true, ready: true });
      const click = await fetch(`${line.host}/v1/cua/move`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ x: 321, y: 123 }),
      });
      assertEquals(await click.json(), { ok: true });
      const where = await new Deno.Command("xdotool", {
        args: ["getmouselocation", "--shell"],
        env: { DISPLAY: display },
      }).output();
      const shell = new TextDecoder().decode(where.stdout);
      assert(shell.includes("X=321") && shell.includes("Y=123"), shell);
      const shot = await fetch(`${line.host}/v1/cua/screenshot?format=png`, { headers: auth });
      const png = new Uint8Array(await shot.arrayBuffer());
      assertEquals([...png.slice(1, 4)], [0x50, 0x4e, 0x47]);
      await (await fetch(`${line.host}/v1/shutdown`, { method: "POST", headers: auth })).body
        ?.cancel();
      assertEquals((await child.status).code, 0);
      const left = await new Deno.Command("pgrep", { args: ["-f", `Xvfb ${display}`] }).output();
      assertEquals(new TextDecoder().decode(left.stdout).trim(), "", "Xvfb outlived the guest");
    } finally {
      await reader.cancel().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
      await child.status;
      await Deno.remove(workspace, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});
