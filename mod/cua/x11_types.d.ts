/** The part of the untyped `x11` npm package that mod/cua uses, typed by hand. */
// deno-lint-ignore-file no-explicit-any

declare namespace x11 {
  interface Screen {
    root: number;
    pixel_width: number;
    pixel_height: number;
  }
  interface Client {
    /** Interned atoms by name; the package shares one object across connections. */
    atoms: Record<string, number>;
    atom_names: Record<number, string>;
    on(event: string, listener: (...args: any[]) => void): void;
    require(name: string, cb: (err: Error | null, ext: any) => void): void;
    terminate(): void;
    GetInputFocus(cb: (err: Error | null, r: { focus: number }) => void): void;
    SetInputFocus(window: number, revertTo: number): void;
    QueryPointer(window: number, cb: (err: Error | null, r: PointerReply) => void): void;
    TranslateCoordinates(
      src: number,
      dst: number,
      x: number,
      y: number,
      cb: (err: Error | null, r: { child: number }) => void,
    ): void;
    QueryTree(window: number, cb: (err: Error | null, r: any) => void): void;
    InternAtom(
      onlyIfExists: boolean,
      name: string,
      cb: (err: Error | null, a: number) => void,
    ): void;
    GetProperty(
      del: number,
      window: number,
      atom: number,
      type: number,
      offset: number,
      length: number,
      cb: (err: Error | null, p: PropertyReply) => void,
    ): void;
    GetImage(
      format: number,
      drawable: number,
      x: number,
      y: number,
      w: number,
      h: number,
      planeMask: number,
      cb: (err: Error | null, r: any) => void,
    ): void;
    GetKeyboardMapping(first: number, count: number, cb: (err: Error | null, r: any) => void): void;
    ChangeKeyboardMapping(first: number, perKeycode: number, keysyms: number[]): void;
    QueryKeymap(cb: (err: Error | null, r: any) => void): void;
    SendClientMessage(
      destination: number,
      window: number,
      type: number,
      format: number,
      data: number[],
    ): void;
  }
  interface Display {
    screen: Screen[];
    min_keycode: number;
    max_keycode: number;
    client: Client;
  }
  interface XTest {
    FakeInput(type: number, detail: number, time: number, wid: number, x: number, y: number): void;
  }
  interface PointerReply {
    rootX: number;
    rootY: number;
    child: number;
    keyMask: number;
  }
  interface PropertyReply {
    type: number;
    format: number;
    data: Uint8Array;
  }
  function createClient(
    options: { display: string; shm: boolean; auth?: { name: string; data: string } },
    cb: (err: Error | null, display: Display) => void,
  ): Client;
  const keySyms: Record<string, { code: number; description: string }>;
}

export default x11;
