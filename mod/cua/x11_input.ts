/**
 * Pointer and keyboard input through XTEST on one held connection: moves, presses, clicks,
 * wheel notches, chords and typed text, paced so Chromium can map every event.
 */
import { FAKE, type XConnection } from "./x11_client.ts";
import { keysymOfChar, MODIFIER_KEYSYMS, parseChord, SHIFT_L } from "./keys.ts";

/** The gap between press and release of a click. */
export const CLICK_GAP_MS = 12;
/** The pace of typed characters. */
export const CHAR_GAP_MS = 30;
/** The pause after a drag's press, so Openbox can start a title-bar grab. */
export const DRAG_PRESS_PAUSE_MS = 50;
/** How many interpolated motion events a drag without a path sends. */
const DRAG_STEPS = 12;

interface KeyPlace {
  keycode: number;
  shifted: boolean;
}

/** Drives one display's pointer and keyboard. */
export class XInput {
  #map = new Map<number, KeyPlace>();
  #scratch = 0;
  /** Whether the scratch keycode carries a keysym that must be unbound after the action. */
  #scratchBound = false;
  #loaded = false;

  constructor(private readonly x: XConnection) {}

  /** Moves the pointer to (x, y) without waiting for the server. */
  move(x: number, y: number): void {
    this.x.fake(FAKE.motion, 0, { x, y });
  }

  /** Presses a button (1-7). */
  buttonDown(button: number): void {
    this.x.fake(FAKE.buttonPress, button);
  }

  /** Releases a button (1-7). */
  buttonUp(button: number): void {
    this.x.fake(FAKE.buttonRelease, button);
  }

  /**
   * Move, press, a short gap, release. Resolves once the server has performed the press; the
   * server holds the release for CLICK_GAP_MS itself, and everything sent later on this
   * connection queues behind it, so the next action cannot overtake the release.
   */
  async click(x: number, y: number, button: number): Promise<void> {
    this.move(x, y);
    this.buttonDown(button);
    await this.x.sync();
    this.x.fake(FAKE.buttonRelease, button, { delayMs: CLICK_GAP_MS });
  }

  /** Two clicks at the point, each press and release CLICK_GAP_MS apart on the server. */
  async doubleClick(x: number, y: number, button: number): Promise<void> {
    await this.click(x, y, button);
    this.x.fake(FAKE.buttonPress, button, { delayMs: CLICK_GAP_MS });
    this.x.fake(FAKE.buttonRelease, button, { delayMs: CLICK_GAP_MS });
  }

  /** Press at the first point, move through `path` (or an interpolated line), release at the last. */
  async drag(
    from: { x: number; y: number },
    to: { x: number; y: number },
    options: { button: number; path?: { x: number; y: number }[] },
  ): Promise<void> {
    this.move(from.x, from.y);
    this.buttonDown(options.button);
    await this.x.sync();
    await pause(DRAG_PRESS_PAUSE_MS);
    const points = options.path ?? interpolate(from, to, DRAG_STEPS);
    for (const point of points) {
      this.move(point.x, point.y);
      await this.x.sync();
      await pause(4);
    }
    this.move(to.x, to.y);
    await this.x.sync();
    this.buttonUp(options.button);
    await this.x.sync();
  }

  /** Moves to (x, y) then sends wheel notches: 120 units a notch, at least one per axis set. */
  async scroll(x: number, y: number, delta: { dx: number; dy: number }): Promise<void> {
    this.move(x, y);
    for (const [amount, negative, positive] of [[delta.dy, 4, 5], [delta.dx, 6, 7]]) {
      if (amount === 0) continue;
      const button = amount < 0 ? negative : positive;
      const notches = Math.max(1, Math.round(Math.abs(amount) / 120));
      for (let i = 0; i < notches; i++) {
        this.buttonDown(button);
        this.buttonUp(button);
        await this.x.sync();
      }
    }
    await this.x.sync();
  }

  /** A chord: tap (modifiers cleared, then restored), down or up (held modifiers kept). */
  async key(chord: string, action: "tap" | "down" | "up"): Promise<void> {
    const keysyms = parseChord(chord);
    const places = [];
    for (const keysym of keysyms) places.push(await this.#place(keysym));
    if (action === "down") {
      for (const place of places) this.#press(place, true);
    } else if (action === "up") {
      for (const place of [...places].reverse()) this.#press(place, false);
    } else {
      const held = await this.#heldModifiers();
      for (const keycode of held) this.x.fake(FAKE.keyRelease, keycode);
      const shift = (await this.#place(SHIFT_L)).keycode;
      const needShift = places.some((p) => p.shifted) && !places.some((p) => p.keycode === shift);
      if (needShift) this.x.fake(FAKE.keyPress, shift);
      for (const place of places) this.x.fake(FAKE.keyPress, place.keycode);
      await this.x.sync();
      await pause(CLICK_GAP_MS);
      for (const place of [...places].reverse()) this.x.fake(FAKE.keyRelease, place.keycode);
      if (needShift) this.x.fake(FAKE.keyRelease, shift);
      for (const keycode of held) this.x.fake(FAKE.keyPress, keycode);
    }
    await this.x.sync();
    await this.#restoreScratch();
  }

  /** Types text one character at a time, paced at CHAR_GAP_MS. */
  async type(text: string): Promise<void> {
    const shift = (await this.#place(SHIFT_L)).keycode;
    for (const char of text) {
      const place = await this.#place(keysymOfChar(char));
      if (place.shifted) this.x.fake(FAKE.keyPress, shift);
      this.x.fake(FAKE.keyPress, place.keycode);
      this.x.fake(FAKE.keyRelease, place.keycode);
      if (place.shifted) this.x.fake(FAKE.keyRelease, shift);
      await this.x.sync();
      await pause(CHAR_GAP_MS);
    }
    await this.#restoreScratch();
  }

  /** Releases every button and modifier this desktop might have left held. */
  async releaseAll(): Promise<void> {
    for (let button = 1; button <= 7; button++) this.buttonUp(button);
    for (const keycode of await this.#heldModifiers()) this.x.fake(FAKE.keyRelease, keycode);
    await this.x.sync();
  }

  #press(place: KeyPlace, down: boolean): void {
    this.x.fake(down ? FAKE.keyPress : FAKE.keyRelease, place.keycode);
  }

  async #heldModifiers(): Promise<number[]> {
    await this.#load();
    const bits = await this.x.queryKeymap();
    const held: number[] = [];
    for (const keysym of MODIFIER_KEYSYMS) {
      const place = this.#map.get(keysym);
      if (place && (bits[place.keycode >> 3] & (1 << (place.keycode & 7))) !== 0) {
        held.push(place.keycode);
      }
    }
    return held;
  }

  async #load(): Promise<void> {
    if (this.#loaded) return;
    const rows = await this.x.keyboardMapping();
    const min = this.x.keycodes.min;
    this.#map.clear();
    this.#scratch = 0;
    rows.forEach((row, i) => {
      const keycode = min + i;
      if (row.every((keysym) => keysym === 0)) this.#scratch = keycode;
      for (const level of [0, 1]) {
        const keysym = row[level];
        if (keysym && !this.#map.has(keysym)) {
          this.#map.set(keysym, { keycode, shifted: level === 1 });
        }
      }
    });
    this.#loaded = true;
  }

  /** Where a keysym is; binds the scratch keycode to it when no key carries it. */
  async #place(keysym: number): Promise<KeyPlace> {
    await this.#load();
    const known = this.#map.get(keysym);
    if (known) return known;
    if (this.#scratch === 0) {
      throw new Error(`no free keycode to type keysym 0x${keysym.toString(16)}`);
    }
    this.x.changeKeyboardMapping(this.#scratch, [keysym, keysym]);
    await this.x.sync();
    // Clients reload their keymap on MappingNotify before the key event arrives.
    await pause(CHAR_GAP_MS);
    this.#scratchBound = true;
    return { keycode: this.#scratch, shifted: false };
  }

  async #restoreScratch(): Promise<void> {
    if (!this.#scratchBound) return;
    this.#scratchBound = false;
    this.x.changeKeyboardMapping(this.#scratch, [0, 0]);
    await this.x.sync();
  }
}

function interpolate(
  from: { x: number; y: number },
  to: { x: number; y: number },
  steps: number,
): { x: number; y: number }[] {
  const points = [];
  for (let i = 1; i < steps; i++) {
    points.push({
      x: Math.round(from.x + ((to.x - from.x) * i) / steps),
      y: Math.round(from.y + ((to.y - from.y) * i) / steps),
    });
  }
  return points;
}

/** Waits `ms` milliseconds: pacing between input events, never readiness. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
