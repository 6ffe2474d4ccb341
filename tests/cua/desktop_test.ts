/**
 * Computer use against a real desktop: Xvfb, openbox and Chromium on a page served by the test,
 * which records what it receives. One desktop for the whole file. Skips when Xvfb is missing.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  call,
  hasXvfb,
  hoverUntilSeen,
  type PageEvent,
  pointerByXdotool,
  RecordingPage,
  startDesktop,
} from "./fixture.ts";
import {
  DESKTOP_WAIT,
  dropFocus,
  pidOf,
  rfbSecurityTypes,
  topLevelAtoms,
  vncAuthenticates,
} from "./desktop_probes.ts";
import { until } from "../kit/mod.ts";

const XVFB = hasXvfb();
if (!XVFB) {
  console.warn(
    "tests/cua/desktop_test.ts: Xvfb is not installed, so the desktop tests are skipped.",
  );
}

const last = (events: PageEvent[], type: string) => events.filter((e) => e.type === type).at(-1);
const at = (type: string, x: number, y: number) => (events: PageEvent[]) =>
  events.find((e) => e.type === type && e.x === x && e.y === y);

Deno.test({
  name: "the real desktop",
  ignore: !XVFB,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const workspace = await Deno.makeTempDir({ prefix: "gurt-cua-" });
  const page = new RecordingPage();
  const vncPassword = `pw${crypto.randomUUID().slice(0, 6)}`;
  const { desktop, app, options } = await startDesktop(workspace, {
    startUrl: page.url("/"),
    vncPassword,
  });
  const steps = { sanitizeOps: false, sanitizeResources: false, sanitizeExit: false };
  try {
    await page.until("the page loading", (events) => last(events, "load"));
    // Where the page's client area sits on screen, from a hover the page reports. The window
    // may still be mapping when the page has loaded, so hover until the page sees one.
    const hover = await hoverUntilSeen(app, page, { x: 640, y: 500 });
    const offset = { x: hover.x! - hover.cx!, y: hover.y! - hover.cy! };
    const textarea = { x: offset.x + 100, y: offset.y + 250 };

    await t.step({
      ...steps,
      name: "status routes report the display, Chromium's DevTools and its window",
      fn: async () => {
        const status = (await call(app, "/v1/desktop")).body;
        assertEquals(
          { ready: status.ready, display: status.display, geometry: status.geometry },
          { ready: true, display: options.display, geometry: "1280x800x24" },
        );
        const chrome = (await call(app, "/v1/chrome")).body;
        assertEquals({ ready: chrome.ready, running: chrome.running }, {
          ready: true,
          running: true,
        });
        const on = { enabled: true, ready: true };
        assertEquals(await desktop.capabilities(), { desktop: on, chrome: on, cua: on });
        const query = await new Deno.Command("setxkbmap", {
          args: ["-query", "-display", options.display],
          stdout: "piped",
        }).output();
        assertStringIncludes(new TextDecoder().decode(query.stdout), "layout:     us");
        const windows = (await call(app, "/v1/windows")).body.windows;
        assert(
          windows.some((w: { class: string }) => w.class.endsWith(".Chromium")),
          JSON.stringify(windows),
        );
      },
    });

    await t.step({
      ...steps,
      name:
        "VNC asks for a password on loopback, noVNC serves its page, no command line or environment holds it",
      fn: async () => {
        const status = (await call(app, "/v1/desktop")).body;
        assertEquals(status.vnc, `127.0.0.1:${options.vncPort}`);
        assertEquals(status.viewer.url, `http://127.0.0.1:${options.viewerPort}/vnc.html`);
        const viewer = await fetch(status.viewer.url);
        assertEquals(viewer.status, 200);
        assertStringIncludes(await viewer.text(), "noVNC");
        assertEquals(await rfbSecurityTypes(options.vncPort), [2], "VNC authentication only");
        assertEquals(await vncAuthenticates(options.vncPort, vncPassword), true);
        assertEquals(await vncAuthenticates(options.vncPort, "wrong-pw"), false);
        for await (const entry of Deno.readDir("/proc")) {
          if (!/^\d+$/.test(entry.name)) continue;
          const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
          assert(!cmdline.includes(vncPassword), `pid ${entry.name} shows the VNC password`);
          // x11vnc's environment is open to every exec, which runs as the guest's user.
          const environ = await Deno.readTextFile(`/proc/${entry.name}/environ`).catch(() => "");
          assert(!environ.includes(vncPassword), `pid ${entry.name}'s environment holds it`);
        }
      },
    });

    await t.step({
      ...steps,
      name: "click, right click and double_click land on the page at the given coordinates",
      fn: async () => {
        assertEquals((await call(app, "/v1/cua/click", { x: 700, y: 450 })).status, 200);
        const click = await page.until("a click at (700, 450)", at("click", 700, 450));
        assertEquals(click.button, 0);
        assertEquals((await call(app, "/v1/cua/click", { x: 710, y: 460, button: 3 })).status, 200);
        const right = await page.until("a press at (710, 460)", at("mousedown", 710, 460));
        assertEquals(right.button, 2);
        assertEquals((await call(app, "/v1/cua/double_click", { x: 720, y: 470 })).status, 200);
        await page.until("a dblclick at (720, 470)", at("dblclick", 720, 470));
      },
    });

    await t.step({
      ...steps,
      name: "mousedown, move and mouseup (aliases) make a press, a held move and a release",
      fn: async () => {
        assertEquals((await call(app, "/v1/cua/mousedown", { x: 600, y: 420 })).status, 200);
        assertEquals((await call(app, "/v1/cua/move", { x: 650, y: 430 })).status, 200);
        const release = { x: 660, y: 440, path: [{ x: 655, y: 435 }] };
        assertEquals((await call(app, "/v1/cua/mouseup", release)).status, 200);
        await page.until("a press at (600, 420)", at("mousedown", 600, 420));
        await page.until(
          "a move with the button held",
          // Chromium coalesces moves, so any held move past the press counts.
          (events) => events.find((e) => e.type === "mousemove" && e.x! >= 650 && e.buttons === 1),
        );
        await page.until("a release at (660, 440)", at("mouseup", 660, 440));
        const drag = { x1: 500, y1: 400, x2: 560, y2: 480 };
        assertEquals((await call(app, "/v1/cua/drag", drag)).status, 200);
        await page.until("a drag's press at (500, 400)", at("mousedown", 500, 400));
        await page.until("a drag's release at (560, 480)", at("mouseup", 560, 480));
      },
    });

    await t.step({
      ...steps,
      name: "typed text arrives whole, shifted and unmapped characters included",
      fn: async () => {
        page.clear();
        await call(app, "/v1/cua/click", textarea);
        // Chromium moves the focus on its own time: type once the textarea has it.
        await page.until("the textarea focused", (events) => last(events, "textarea-focus"));
        page.clear();
        const text = "Hello, World! 42 é~";
        assertEquals((await call(app, "/v1/cua/type", { text })).status, 200);
        await page.until(
          `the text ${text}`,
          (events) => last(events, "input")?.value === text || undefined,
        );
      },
    });

    await t.step({
      ...steps,
      name: "a chord is pressed as one chord: ctrl+a selects all, so typing replaces the text",
      fn: async () => {
        page.clear();
        assertEquals((await call(app, "/v1/cua/key", { key: "ctrl+a" })).status, 200);
        const down = await page.until(
          "ctrl+a",
          (events) => events.find((e) => e.type === "keydown" && e.key === "a"),
        );
        assertEquals(down.ctrl, true);
        assertEquals((await call(app, "/v1/cua/type", { text: "X" })).status, 200);
        await page.until(
          "the text replaced by X",
          (events) => last(events, "input")?.value === "X" || undefined,
        );
        assertEquals((await call(app, "/v1/cua/key", { key: "shift+Return" })).status, 200);
        const shiftReturn = await page.until(
          "shift+Return",
          (events) => events.find((e) => e.type === "keydown" && e.key === "Enter"),
        );
        assertEquals(shiftReturn.shift, true);
      },
    });

    await t.step({
      ...steps,
      name: "scroll sends wheel notches in the asked direction at the asked point",
      fn: async () => {
        assertEquals((await call(app, "/v1/cua/scroll", { x: 800, y: 500, dy: 240 })).status, 200);
        const down = await page.until(
          "a wheel down",
          (events) => events.find((e) => e.type === "wheel" && e.dy! > 0),
        );
        assertEquals([down.x, down.y], [800, 500]);
        assertEquals((await call(app, "/v1/cua/scroll", { x: 790, y: 490, dy: -1 })).status, 200);
        const up = await page.until(
          "a wheel up",
          (events) => events.find((e) => e.type === "wheel" && e.dy! < 0),
        );
        assertEquals([up.x, up.y], [790, 490]);
        assertEquals((await call(app, "/v1/cua/scroll", { x: 780, y: 480, dx: 120 })).status, 200);
        const right = await page.until(
          "a wheel right",
          (events) => events.find((e) => e.type === "wheel" && e.dx! > 0),
        );
        assertEquals([right.x, right.y, right.dy], [780, 480, 0]);
        // 120 units a notch: 360 is three notches, each the size of the one -1 gave.
        assertEquals((await call(app, "/v1/cua/scroll", { x: 770, y: 470, dy: 360 })).status, 200);
        const notch = Math.abs(up.dy!);
        const sumAt = (events: PageEvent[]) =>
          events.filter((e) => e.type === "wheel" && e.x === 770 && e.y === 470)
            .reduce((sum, e) => sum + e.dy!, 0);
        await page.until("three notches down", (events) => sumAt(events) >= 3 * notch || undefined);
        // A later move marks the end: every notch the scroll sent was dispatched before it.
        assertEquals((await call(app, "/v1/cua/move", { x: 771, y: 471 })).status, 200);
        await page.until(
          "the marker move",
          (events) => events.find((e) => e.type === "mousemove" && e.x === 771 && e.y === 471),
        );
        assertEquals(sumAt(page.events), 3 * notch);
        const none = await call(app, "/v1/cua/scroll", { x: 780, y: 480 });
        assertEquals([none.status, none.body.error.code], [400, "invalid_request"]);
      },
    });

    await t.step({
      ...steps,
      name: "screenshot answers a 1280x800 PNG as JSON and as raw bytes",
      fn: async () => {
        const json = (await call(app, "/v1/cua/screenshot")).body;
        assertEquals([json.mime, json.width, json.height], ["image/png", 1280, 800]);
        const bytes = Uint8Array.from(atob(json.png_base64), (c) => c.charCodeAt(0));
        assertEquals(bytes.length, json.bytes);
        const raw = await app.request("/v1/cua/screenshot", { headers: { accept: "image/png" } });
        assertEquals(raw.headers.get("content-type"), "image/png");
        const png = new Uint8Array(await raw.arrayBuffer());
        assertEquals([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
        assertEquals(new DataView(png.buffer).getUint32(16), 1280);
      },
    });

    await t.step({
      ...steps,
      name: "observe page reports Chromium's window and the URL change after an address and Return",
      fn: async () => {
        const second = page.url("/second");
        page.clear();
        const first = (await call(app, "/v1/cua/batch", {
          observe: "page",
          screenshot: "none",
          // A move, not a click: a click's focus request would race the address bar's.
          steps: [{ op: "move", x: 700, y: 450 }, { op: "key", key: "ctrl+l" }],
        })).body;
        assertEquals([first.ok, first.observe], [true, "page"], JSON.stringify(first));
        const [move, ctrlL] = first.steps;
        assert(move.observed.target.class.endsWith(".Chromium"), JSON.stringify(move.observed));
        assertEquals(move.observed.url_before, undefined, "a move reads no URL");
        assertEquals(ctrlL.observed.url_before, page.url("/"));
        assertEquals(ctrlL.observed.focus.state, "window");
        assert(ctrlL.observed.focus.class.endsWith(".Chromium"));
        // Chromium hands the keyboard to its address bar on its own time: the page says when.
        await page.until(
          "the address bar taking the keyboard",
          (events) => last(events, "page-blur"),
        );
        const typed = (await call(app, "/v1/cua/batch", {
          observe: "page",
          screenshot: "none",
          steps: [{ op: "type", text: second }, { op: "key", key: "Return" }, {
            op: "wait",
            ms: 10,
          }],
        })).body;
        assertEquals(typed.ok, true, JSON.stringify(typed));
        const [, enter, wait] = typed.steps;
        assertEquals(enter.observed.focus.state, "window");
        assertEquals(enter.observed.url_before, page.url("/"));
        assertEquals(wait.observed, undefined, "a wait has nothing to look at");
        await page.until(
          "the second page loading",
          (events) => events.find((e) => e.type === "load" && e.path === "/second"),
        );
        const after = (await call(app, "/v1/cua/batch", {
          observe: "page",
          screenshot: "none",
          steps: [{ op: "click", x: 700, y: 450 }],
        })).body;
        assertEquals(after.steps[0].observed.url_before, second);
      },
    });

    await t.step({
      ...steps,
      name: "type with no focused window reports focus.state none and reaches nothing",
      fn: async () => {
        const openbox = await pidOf("openbox", options.display);
        // Hold the window manager still, so it cannot hand the focus back, and drop the focus.
        Deno.kill(openbox, "SIGSTOP");
        try {
          await dropFocus(options.display);
          page.clear();
          const receipt = (await call(app, "/v1/cua/batch", {
            observe: "input",
            screenshot: "none",
            steps: [{ op: "type", text: "zz" }],
          })).body;
          assertEquals(receipt.observe, "input");
          assertEquals(receipt.steps[0].observed.focus, { state: "none" });
          assertEquals(receipt.steps[0].observed.url_before, undefined, "input does not read URLs");
        } finally {
          Deno.kill(openbox, "SIGCONT");
        }
        await call(app, "/v1/cua/click", textarea);
        // The page takes the focus back on Chromium's own time: type the marker until it lands.
        for (let i = 0; i < 20; i++) {
          await call(app, "/v1/cua/type", { text: "q" });
          const seen = await page.until(
            "q",
            (events) => last(events, "keydown")?.key === "q" || undefined,
            300,
          )
            .catch(() => false);
          if (seen) break;
        }
        await page.until(
          "the marker q",
          (events) => events.find((e) => e.type === "keydown" && e.key === "q"),
        );
        assert(
          !page.events.some((e) => e.type === "keydown" && e.key === "z"),
          "z reached the page",
        );
      },
    });

    await t.step({
      ...steps,
      name: "a bad plan moves nothing: the pointer read by xdotool stays put",
      fn: async () => {
        await call(app, "/v1/cua/move", { x: 321, y: 123 });
        const before = await pointerByXdotool(options.display);
        assertEquals(before, { x: 321, y: 123 });
        const bad = await call(app, "/v1/cua/batch", {
          steps: [{ op: "move", x: 10, y: 10 }, { op: "click", x: 10, y: 10 }, {
            op: "click",
            x: 1280,
            y: 5,
          }],
        });
        assertEquals(bad.status, 400);
        assertEquals(bad.body.error.code, "out_of_range");
        assertStringIncludes(bad.body.error.message, "step 2 (click)");
        const long = await call(app, "/v1/cua/batch", {
          steps: [{ op: "move", x: 10, y: 10 }, { op: "wait", ms: 10_001 }],
        });
        assertEquals([long.status, long.body.error.code], [400, "invalid_request"]);
        assertEquals(await pointerByXdotool(options.display), before);
      },
    });

    await t.step({
      ...steps,
      name: "a recorded recipe yields an MP4 that ffprobe reads, with the moov atom first",
      fn: async () => {
        const receipt = (await call(app, "/v1/cua/batch", {
          record: true,
          artifact_dir: "runs/demo",
          steps: [
            { op: "move", x: 100, y: 100 },
            { op: "wait", ms: 200 },
            { op: "move", x: 900, y: 600 },
          ],
        })).body;
        assertEquals(receipt.ok, true, JSON.stringify(receipt));
        assertEquals(receipt.observe, undefined, "observe off is not echoed");
        assertEquals(receipt.steps[0].observed, undefined);
        const video = receipt.artifacts.find((a: { kind: string }) => a.kind === "video");
        const real = await Deno.realPath(workspace);
        assertEquals(video.path, `${real}/runs/demo/recording.mp4`);
        assertEquals(receipt.screenshot.path, `${real}/runs/demo/end.png`);
        const probe = await new Deno.Command("ffprobe", {
          args: ["-v", "error", "-show_streams", "-show_format", "-of", "json", video.path],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert(probe.success, new TextDecoder().decode(probe.stderr));
        const info = JSON.parse(new TextDecoder().decode(probe.stdout));
        assertEquals(info.streams[0].codec_name, "h264");
        assert(Number(info.format.duration) > 0);
        const atoms = topLevelAtoms(await Deno.readFile(video.path));
        assert(
          atoms.indexOf("moov") >= 0 && atoms.indexOf("moov") < atoms.indexOf("mdat"),
          atoms.join(","),
        );
        assertEquals([...Deno.readDirSync(`${workspace}/runs/demo`)].map((e) => e.name).sort(), [
          "end.png",
          "recording.mp4",
        ]);
      },
    });

    await t.step({
      ...steps,
      name: "screenshot modes: each step's PNG as files, or inline base64 without artifact_dir",
      fn: async () => {
        const each = (await call(app, "/v1/cua/batch", {
          screenshot: "each",
          artifact_dir: "runs/each",
          steps: [{ op: "move", x: 10, y: 10 }, { op: "move", x: 20, y: 20 }],
        })).body;
        assertEquals(each.screenshot, undefined, "each has no end screenshot");
        assertEquals(each.steps.map((s: { screenshot: { path: string } }) => s.screenshot.path), [
          `${await Deno.realPath(workspace)}/runs/each/step-000.png`,
          `${await Deno.realPath(workspace)}/runs/each/step-001.png`,
        ]);
        assertEquals(each.artifacts.length, 2);
        const inline = (await call(app, "/v1/cua/batch", {
          screenshot: "none",
          steps: [{ op: "screenshot" }],
        })).body;
        const shot = inline.steps[0].screenshot;
        assertEquals([shot.width, shot.height, shot.path], [1280, 800, undefined]);
        assertEquals(atob(shot.png_base64).length, shot.bytes);
        assertEquals([inline.screenshot, inline.artifacts], [undefined, []]);
      },
    });

    await t.step({
      ...steps,
      name: "reset_desktop closes every window; then the focus is parked and the URLs are absent",
      fn: async () => {
        const receipt = (await call(app, "/v1/cua/batch", {
          screenshot: "none",
          observe: "page",
          steps: [{ op: "reset_desktop" }, { op: "click", x: 5, y: 5 }, { op: "key", key: "a" }],
        })).body;
        assertEquals([receipt.ok, receipt.ran, receipt.stopped_at], [true, 3, null]);
        // With no window left, openbox parks the focus where nothing listens: on the root window,
        // or (seen once under a full parallel test run) PointerRoot, the window under the pointer,
        // which is the root here too.
        const parked = receipt.steps[2].observed.focus.state;
        assert(parked === "root" || parked === "pointer_root", parked);
        assertEquals(receipt.steps[0].observed, undefined, "reset_desktop has nothing to look at");
        const observed = receipt.steps[1].observed;
        assertEquals(observed.target.class, "", "nothing but the root under the point");
        assert(!("url_before" in observed) && !("url_after" in observed), JSON.stringify(observed));
        assertEquals((await call(app, "/v1/windows")).body.windows, []);
        // Chromium exits cleanly once its last window is gone, and is not restarted.
        await until(async () => !(await call(app, "/v1/chrome")).body.running, {
          ...DESKTOP_WAIT,
          what: "Chromium gone",
        });
        // With settle on, reset_desktop launches a fresh Chromium and waits for it.
        const settled = (await call(app, "/v1/cua/batch", {
          screenshot: "none",
          settle: "compressed",
          steps: [{ op: "reset_desktop" }],
        })).body;
        assertEquals(settled.ok, true, JSON.stringify(settled));
        const chrome = (await call(app, "/v1/chrome")).body;
        assertEquals([chrome.running, chrome.ready], [true, true]);
      },
    });
  } finally {
    await desktop.stop();
    await page.close();
    await Deno.remove(workspace, { recursive: true });
  }
});
