/// <reference lib="deno.worker" />
/** Says which permissions it holds: run with the hasher Worker's (hasherPermissions). */
self.onmessage = async (event: MessageEvent<{ library: string; other: string }>) => {
  const { library, other } = event.data;
  const state = async (descriptor: Deno.PermissionDescriptor) =>
    (await Deno.permissions.query(descriptor)).state;
  const refused = (act: () => unknown): boolean => {
    try {
      act();
      return false;
    } catch (error) {
      return error instanceof Deno.errors.NotCapable ||
        error instanceof Deno.errors.PermissionDenied;
    }
  };
  self.postMessage({
    ffiLibrary: await state({ name: "ffi", path: library }),
    ffiOther: await state({ name: "ffi", path: other }),
    ffiAny: await state({ name: "ffi" }),
    read: await state({ name: "read" }),
    readLibrary: await state({ name: "read", path: library }),
    write: await state({ name: "write" }),
    net: await state({ name: "net" }),
    env: await state({ name: "env" }),
    sys: await state({ name: "sys" }),
    run: await state({ name: "run" }),
    import: await state({ name: "import" }),
    refusesOther: refused(() => Deno.dlopen(other, {}).close()),
    refusesRead: refused(() => Deno.readFileSync(library)),
    refusesEnv: refused(() => Deno.env.get("HOME")),
    refusesWrite: refused(() => Deno.writeTextFileSync("/tmp/gurt-hasher-probe", "x")),
  });
};
