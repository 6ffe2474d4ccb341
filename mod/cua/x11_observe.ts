/**
 * What the X server says about windows, read without moving anything: the client window under a
 * point, where the keyboard focus is, and the client windows listed the way `wmctrl -lx` does.
 */
import type { XConnection } from "./x11_client.ts";

/** A client window: its id as 0x%08x, WM_CLASS as instance.Class, and its title. */
export interface WindowInfo {
  id: string;
  class: string;
  title: string;
}

/** Where typed keys were about to go. */
export interface FocusInfo {
  state: "none" | "pointer_root" | "root" | "window";
  id?: string;
  class?: string;
  title?: string;
}

/** A row of the window list: like one line of `wmctrl -lx`. */
export interface WindowRow extends WindowInfo {
  desktop: number;
}

const MAX_DEPTH = 8;

/** Reads windows on a held connection, caching the atoms it needs. */
export class XObserver {
  #atoms = new Map<string, number>();

  constructor(private readonly x: XConnection) {}

  /** The client window (the one carrying WM_STATE) covering the root point, or the root itself. */
  async windowAt(x: number, y: number): Promise<WindowInfo> {
    const wmState = await this.#atom("WM_STATE");
    let window = this.x.root;
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      const child = await this.x.childAt(window, { x, y });
      if (child === 0) break;
      window = child;
      if (await this.x.property(child, wmState)) {
        return await this.describe(child);
      }
    }
    return { id: hex(this.x.root), class: "", title: "" };
  }

  /** The focus: none, PointerRoot, parked where no client listens (root), or a client window. */
  async focus(): Promise<FocusInfo> {
    const focus = await this.x.inputFocus();
    if (focus === 0) return { state: "none" };
    if (focus === 1) return { state: "pointer_root" };
    if (focus === this.x.root) return { state: "root" };
    const wmState = await this.#atom("WM_STATE");
    let window = focus;
    for (let depth = 0; depth < MAX_DEPTH && window !== 0 && window !== this.x.root; depth++) {
      if (await this.x.property(window, wmState)) {
        return { state: "window", ...(await this.describe(window)) };
      }
      window = (await this.x.queryTree(window)).parent;
    }
    // Inside a client's frame, the client is the frame's child that carries WM_STATE.
    const tree = await this.x.queryTree(focus);
    for (const child of tree.children) {
      if (await this.x.property(child, wmState)) {
        return { state: "window", ...(await this.describe(child)) };
      }
    }
    return { state: "root" };
  }

  /** A window's id, WM_CLASS (instance.Class) and title (_NET_WM_NAME, else WM_NAME). */
  async describe(window: number): Promise<WindowInfo> {
    const wmClass = await this.x.property(
      window,
      await this.#atom("WM_CLASS"),
    );
    const netName = await this.x.property(
      window,
      await this.#atom("_NET_WM_NAME"),
    );
    const name = netName ??
      await this.x.property(window, await this.#atom("WM_NAME"));
    const classParts = wmClass ? decode(wmClass.data).split("\0").filter((s) => s !== "") : [];
    return { id: hex(window), class: classParts.join("."), title: name ? decode(name.data) : "" };
  }

  /** The window manager's client list with each window's desktop, class and title. */
  async list(): Promise<WindowRow[]> {
    const clients = await this.x.property(
      this.x.root,
      await this.#atom("_NET_CLIENT_LIST"),
    );
    if (!clients) return [];
    const desktopAtom = await this.#atom("_NET_WM_DESKTOP");
    const rows: WindowRow[] = [];
    for (const window of words(clients.data)) {
      const desktop = await this.x.property(window, desktopAtom);
      const info = await this.describe(window);
      rows.push({
        id: info.id,
        desktop: desktop ? signed(words(desktop.data)[0]) : -1,
        class: info.class,
        title: info.title,
      });
    }
    return rows;
  }

  /** The window ids of the window manager's client list. */
  async clientIds(): Promise<number[]> {
    const clients = await this.x.property(
      this.x.root,
      await this.#atom("_NET_CLIENT_LIST"),
    );
    return clients ? words(clients.data) : [];
  }

  /** Whether a window manager has announced itself (_NET_SUPPORTING_WM_CHECK on the root). */
  async hasWindowManager(): Promise<boolean> {
    const check = await this.#atom("_NET_SUPPORTING_WM_CHECK");
    return (await this.x.property(this.x.root, check)) !== null;
  }

  async #atom(name: string): Promise<number> {
    const known = this.#atoms.get(name);
    if (known !== undefined) return known;
    const atom = await this.x.atom(name);
    this.#atoms.set(name, atom);
    return atom;
  }
}

/** A window id as 0x%08x, the way wmctrl and the seed print it. */
export function hex(window: number): string {
  return `0x${window.toString(16).padStart(8, "0")}`;
}

function decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

function words(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let i = 0; i + 4 <= bytes.length; i += 4) out.push(view.getUint32(i, true));
  return out;
}

function signed(value: number): number {
  return value | 0;
}
