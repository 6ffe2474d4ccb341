/**
 * Computer use on one display: two held X connections (input, observation), one step at a time
 * (there is one pointer), every failure turned into its status
 * (docs/guest-api.md#what-every-route-shares).
 */
import { GuestError } from "../exec-guest/mod.ts";
import { cuaBackend, displayUnavailable, invalidRequest, outOfRange } from "./cua_errors.ts";
import { parseChord } from "./keys.ts";
import { encodePng } from "./png.ts";
import { stepProblems } from "./recipe_lint.ts";
import type { Step } from "./schemas.ts";
import type { Supervisor } from "./supervisor.ts";
import { XConnection, XTimeoutError } from "./x11_client.ts";
import { pause, XInput } from "./x11_input.ts";
import { type FocusInfo, type WindowInfo, type WindowRow, XObserver } from "./x11_observe.ts";

/** How long one observation may take on the X side. */
export const OBSERVE_BOUND_MS = 400;
const INPUT_TIMEOUT_MS = 2000;
const RESET_WAIT_MS = 3000;

/** The desktop's input and observation, shared by the single routes and the recipes. */
export class Cua {
  #input: { x: XConnection; input: XInput } | null = null;
  #observe: { x: XConnection; observer: XObserver } | null = null;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly display: string,
    readonly size: { width: number; height: number },
    private readonly supervisor: Supervisor | null,
  ) {}

  /** Runs `work` alone: one pointer, so one action at a time. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Whether the X server answers a round trip within the observation bound. */
  async displayAnswers(): Promise<boolean> {
    try {
      const { x } = await this.#observer();
      await x.sync();
      return true;
    } catch {
      return false;
    }
  }

  /** Throws 503 display_unavailable unless the input connection is open. */
  async requireDisplay(): Promise<void> {
    const { x } = await this.#inputConnection();
    await this.#backend("a round trip", () => x.sync());
  }

  /** Closes both connections. */
  close(): void {
    this.#input?.x.close();
    this.#observe?.x.close();
    this.#input = null;
    this.#observe = null;
  }

  /** Throws 400 out_of_range if any coordinate of the step is outside the framebuffer. */
  checkRange(step: Step): void {
    const problems = stepProblems(step, this.size);
    if (problems.length > 0) throw outOfRange(`${step.op}: ${problems.join(" ")}`);
  }

  /** Performs one input step, or a wait (not screenshot or reset_desktop). */
  async perform(step: Step): Promise<void> {
    if (step.op === "wait") return await pause(step.ms);
    if (step.op === "key") {
      try {
        parseChord(step.key);
      } catch (error) {
        throw invalidRequest((error as Error).message);
      }
    }
    const { input } = await this.#inputConnection();
    await this.#backend(`${step.op}`, async () => {
      switch (step.op) {
        case "click":
          return await input.click(step.x, step.y, step.button);
        case "double_click":
          return await input.doubleClick(step.x, step.y, step.button);
        case "mouse_down":
        case "mousedown":
          input.move(step.x, step.y);
          input.buttonDown(step.button);
          return await this.#sync();
        case "mouse_up":
        case "mouseup":
          for (const p of step.path ?? []) {
            input.move(p.x, p.y);
            await this.#sync();
          }
          if (step.x !== undefined && step.y !== undefined) input.move(step.x, step.y);
          input.buttonUp(step.button);
          return await this.#sync();
        case "move":
          input.move(step.x, step.y);
          return await this.#sync();
        case "drag":
          return await input.drag({ x: step.x1, y: step.y1 }, { x: step.x2, y: step.y2 }, {
            button: step.button,
            path: step.path,
          });
        case "type":
          return await input.type(step.text);
        case "key":
          return await input.key(step.key, step.action);
        case "scroll":
          return await input.scroll(step.x, step.y, { dx: step.dx, dy: step.dy });
        case "screenshot":
        case "reset_desktop":
          throw new Error(`${step.op} is not an input step`);
      }
    });
  }

  /** The root window as PNG. */
  async screenshot(): Promise<{ png: Uint8Array<ArrayBuffer>; width: number; height: number }> {
    const { x } = await this.#inputConnection();
    return await this.#backend("GetImage", async () => {
      const { width, height } = x.size;
      const image = await x.image({ x: 0, y: 0, width, height });
      if (image.depth !== 24 && image.depth !== 32) {
        throw new Error(`a root window of depth ${image.depth}; PNG capture needs depth 24`);
      }
      return { png: encodePng(image.data, { width, height }), width, height };
    });
  }

  /** Releases held input, closes every client window, and waits until the list is empty. */
  async resetDesktop(options: { relaunchChrome: boolean }): Promise<void> {
    const { input } = await this.#inputConnection();
    const { x, observer } = await this.#observer();
    await this.#backend("reset_desktop", async () => {
      await input.releaseAll();
      this.supervisor?.chromeWillClose();
      for (const window of await observer.clientIds()) {
        await x.closeWindow(window);
      }
      await x.sync();
      const deadline = Date.now() + RESET_WAIT_MS;
      while ((await observer.clientIds()).length > 0 && Date.now() < deadline) {
        await pause(25);
      }
    });
    if (options.relaunchChrome && this.supervisor) {
      await this.supervisor.ensureChrome().catch((error) => {
        throw cuaBackend("relaunching Chromium", (error as Error).message);
      });
    }
  }

  /** The client window under (x, y), or undefined if the X server gave no answer in time. */
  async windowAt(x: number, y: number): Promise<WindowInfo | undefined> {
    return await this.#look((observer) => observer.windowAt(x, y));
  }

  /** Where keys were about to go, or undefined if the X server gave no answer in time. */
  async focus(): Promise<FocusInfo | undefined> {
    return await this.#look((observer) => observer.focus());
  }

  /** The window manager's client windows; empty if the display does not answer. */
  async windows(): Promise<WindowRow[]> {
    return (await this.#look((observer) => observer.list())) ?? [];
  }

  async #look<T>(read: (observer: XObserver) => Promise<T>): Promise<T | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), OBSERVE_BOUND_MS);
    });
    try {
      const work = this.#observer().then(({ observer }) => read(observer));
      return await Promise.race([work.catch(() => undefined), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #sync(): Promise<void> {
    const { x } = await this.#inputConnection();
    await x.sync();
  }

  async #inputConnection(): Promise<{ x: XConnection; input: XInput }> {
    if (this.#input && !this.#input.x.closed) return this.#input;
    const x = await this.#connect(INPUT_TIMEOUT_MS);
    this.#input = { x, input: new XInput(x) };
    return this.#input;
  }

  async #observer(): Promise<{ x: XConnection; observer: XObserver }> {
    if (this.#observe && !this.#observe.x.closed) return this.#observe;
    // Every request on the observation connection is bounded like an observation.
    const x = await this.#connect(OBSERVE_BOUND_MS);
    this.#observe = { x, observer: new XObserver(x) };
    return this.#observe;
  }

  async #connect(timeoutMs: number): Promise<XConnection> {
    try {
      return await XConnection.open(this.display, { timeoutMs });
    } catch (error) {
      throw displayUnavailable(this.display, (error as Error).message);
    }
  }

  async #backend<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof GuestError) throw error;
      if (this.#input?.x.closed || error instanceof XTimeoutError) {
        this.close();
        throw displayUnavailable(this.display, (error as Error).message);
      }
      throw cuaBackend(what, (error as Error).message);
    }
  }
}
