/**
 * One held X11 connection, spoken in pure JavaScript by the `x11` npm package, with each request
 * as a promise bounded in time. Input and observation each hold one of these, so no process is
 * forked per action.
 */
// @ts-types="./x11_types.d.ts"
import x11 from "x11";
import { socketOf } from "./options.ts";

/** An X request that did not answer in time, or a connection that is gone. */
export class XTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`the X server did not answer ${what} within ${ms} ms`);
    this.name = "XTimeoutError";
  }
}

/** The pointer as QueryPointer reports it. */
export interface PointerState {
  x: number;
  y: number;
  /** The top-level child of the root under the pointer, 0 if none. */
  child: number;
  /** The key and button mask (Button1 is 0x100). */
  mask: number;
}

/** A property's type, format and raw bytes. */
export interface XProperty {
  type: number;
  format: number;
  data: Uint8Array;
}

/** The XTEST event types. */
export const FAKE = { keyPress: 2, keyRelease: 3, buttonPress: 4, buttonRelease: 5, motion: 6 };

const DEFAULT_TIMEOUT_MS = 2000;

/** A held connection to one X display. */
export class XConnection {
  #closed = false;

  readonly name: string;
  readonly #timeoutMs: number;

  private constructor(
    private readonly display: x11.Display,
    private readonly xtest: x11.XTest,
    options: { name: string; timeoutMs: number },
  ) {
    this.name = options.name;
    this.#timeoutMs = options.timeoutMs;
    display.client.on("end", () => this.#closed = true);
    display.client.on("close", () => this.#closed = true);
    display.client.on("error", () => {});
  }

  /**
   * Connects to `name` (e.g. ":1") and loads XTEST. Every request on the connection, the
   * connecting included, fails if the server does not answer within `timeoutMs`.
   */
  static async open(name: string, options: { timeoutMs?: number } = {}): Promise<XConnection> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // Without permission the x11 package's connect fails outside any promise we hold, which
    // would end the process; ask first and say which permission is missing.
    const path = socketOf(name);
    const needs: [Deno.PermissionDescriptor, string][] = [
      [{ name: "net", host: `unix:${path}` }, `net unix:${path}`],
      [{ name: "read", path }, `read ${path}`],
      [{ name: "write", path }, `write ${path}`],
    ];
    for (const [descriptor, label] of needs) {
      if (Deno.permissions.querySync(descriptor).state !== "granted") {
        throw new Error(`this process may not open the X socket (it needs permission ${label})`);
      }
    }
    const display = await bounded<x11.Display>(`the connection to ${name}`, timeoutMs, (done) => {
      const client = x11.createClient(
        // Xvfb runs without an authority file: an empty cookie, and no ~/.Xauthority read.
        { display: name, shm: false, auth: { name: "", data: "" } },
        (err: Error | null, d: x11.Display) => done(err, d),
      );
      client.on("error", (err: Error) => done(err, undefined as unknown as x11.Display));
    });
    ownAtomCache(display.client);
    const xtest = await bounded<x11.XTest>("the XTEST query", timeoutMs, (done) => {
      display.client.require("xtest", done);
    });
    return new XConnection(display, xtest, { name, timeoutMs });
  }

  /** Whether the server has hung up. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The root window of screen 0. */
  get root(): number {
    return this.display.screen[0].root;
  }

  /** The framebuffer's width and height in pixels. */
  get size(): { width: number; height: number } {
    const screen = this.display.screen[0];
    return { width: screen.pixel_width, height: screen.pixel_height };
  }

  /** The smallest and largest keycode of this server. */
  get keycodes(): { min: number; max: number } {
    return { min: this.display.min_keycode, max: this.display.max_keycode };
  }

  /** Closes the connection; idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.display.client.terminate();
    } catch {
      // already gone
    }
  }

  /**
   * Sends one XTEST event (no reply; call sync() to know the server processed it). With
   * `delayMs`, the server itself waits that long before it performs the event, and processes
   * nothing more from this connection meanwhile, so later requests stay in order behind it.
   */
  fake(
    type: number,
    detail: number,
    options: { x?: number; y?: number; delayMs?: number } = {},
  ): void {
    this.#checkOpen();
    const window = type === FAKE.motion ? this.root : 0;
    this.xtest.FakeInput(
      type,
      detail,
      options.delayMs ?? 0,
      window,
      options.x ?? 0,
      options.y ?? 0,
    );
  }

  /** A round trip: resolves once the server has processed every request sent so far. */
  sync(): Promise<void> {
    return this.#call<void>("a sync", (done) => {
      this.display.client.GetInputFocus((err: Error | null) => done(err, undefined));
    });
  }

  /** Where the pointer is and what is pressed. */
  queryPointer(): Promise<PointerState> {
    return this.#call("QueryPointer", (done) => {
      this.display.client.QueryPointer(this.root, (err: Error | null, r: x11.PointerReply) => {
        done(err, r && { x: r.rootX, y: r.rootY, child: r.child, mask: r.keyMask });
      });
    });
  }

  /** The window that has the keyboard focus: 0 None, 1 PointerRoot, else a window id. */
  inputFocus(): Promise<number> {
    return this.#call("GetInputFocus", (done) => {
      this.display.client.GetInputFocus((err: Error | null, r: { focus: number }) => {
        done(err, r && r.focus);
      });
    });
  }

  /** Sets the keyboard focus (0 None, 1 PointerRoot, else a window) with revert-to None. */
  setInputFocus(window: number): void {
    this.#checkOpen();
    this.display.client.SetInputFocus(window, 0);
  }

  /** The child of `window` that contains the root point (x, y), 0 if none. */
  childAt(window: number, point: { x: number; y: number }): Promise<number> {
    return this.#call("TranslateCoordinates", (done) => {
      this.display.client.TranslateCoordinates(
        this.root,
        window,
        point.x,
        point.y,
        (err: Error | null, r: { child: number }) => done(err, r && r.child),
      );
    });
  }

  /** The parent and children of a window. */
  queryTree(
    window: number,
  ): Promise<{ parent: number; children: number[] }> {
    return this.#call("QueryTree", (done) => {
      this.display.client.QueryTree(window, done);
    });
  }

  /** An atom's id by name, created if needed. */
  atom(name: string): Promise<number> {
    return this.#call(`InternAtom ${name}`, (done) => {
      this.display.client.InternAtom(false, name, done);
    });
  }

  /** A property of a window (any type), or null when the window does not carry it. */
  property(
    window: number,
    atom: number,
  ): Promise<XProperty | null> {
    return this.#call("GetProperty", (done) => {
      this.display.client.GetProperty(
        0,
        window,
        atom,
        0,
        0,
        4096,
        (err: Error | null, p: x11.PropertyReply) => {
          if (err) return done(err, null);
          done(null, p.type === 0 ? null : { type: p.type, format: p.format, data: p.data });
        },
      );
    });
  }

  /** The pixels of a rectangle of the root window in ZPixmap form (BGRX at depth 24). */
  image(
    rect: { x: number; y: number; width: number; height: number },
  ): Promise<{ depth: number; data: Uint8Array }> {
    return this.#call("GetImage", (done) => {
      this.display.client.GetImage(
        2,
        this.root,
        rect.x,
        rect.y,
        rect.width,
        rect.height,
        0xffffffff,
        done,
      );
    });
  }

  /** The keysyms of every keycode, one row per keycode from `keycodes.min`. */
  keyboardMapping(): Promise<number[][]> {
    const { min, max } = this.keycodes;
    return this.#call("GetKeyboardMapping", (done) => {
      this.display.client.GetKeyboardMapping(min, max - min + 1, done);
    });
  }

  /** Rebinds one keycode to the given keysyms (one per shift level). */
  changeKeyboardMapping(keycode: number, keysyms: number[]): void {
    this.#checkOpen();
    this.display.client.ChangeKeyboardMapping(keycode, keysyms.length, keysyms);
  }

  /** The 256 bits of which keys are down. */
  queryKeymap(): Promise<Uint8Array> {
    return this.#call("QueryKeymap", (done) => {
      this.display.client.QueryKeymap(done);
    });
  }

  /** Asks the window manager to close a client window (EWMH _NET_CLOSE_WINDOW). */
  async closeWindow(window: number): Promise<void> {
    const closeAtom = await this.atom("_NET_CLOSE_WINDOW");
    this.display.client.SendClientMessage(this.root, window, closeAtom, 32, [0, 2, 0, 0, 0]);
  }

  #checkOpen(): void {
    if (this.#closed) throw new XTimeoutError(`on ${this.name}: the connection is closed`, 0);
  }

  #call<T>(what: string, start: (done: Done<T>) => void): Promise<T> {
    this.#checkOpen();
    return bounded(what, this.#timeoutMs, start);
  }
}

/** The last of the atoms every X server predefines (PRIMARY is 1, WM_TRANSIENT_FOR 68). */
const LAST_PREDEFINED_ATOM = 68;

/**
 * The x11 package caches interned atoms in one object shared by every connection of the
 * process, so an atom learnt from one server (or from a server since restarted) would be sent
 * to another, which reads it as a different atom or none. Give each connection its own cache,
 * seeded with the predefined atoms only, which are the same on every server.
 */
function ownAtomCache(client: x11.Client): void {
  const atoms: Record<string, number> = {};
  const names: Record<number, string> = {};
  for (const [name, id] of Object.entries(client.atoms)) {
    if (id >= 1 && id <= LAST_PREDEFINED_ATOM) {
      atoms[name] = id;
      names[id] = name;
    }
  }
  client.atoms = atoms;
  client.atom_names = names;
}

type Done<T> = (err: Error | null | undefined, value: T) => void;

function bounded<T>(what: string, ms: number, start: (done: Done<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      reject(new XTimeoutError(what, ms));
    }, ms);
    const done: Done<T> = (err, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve(value);
    };
    try {
      start(done);
    } catch (error) {
      done(error as Error, undefined as unknown as T);
    }
  });
}
