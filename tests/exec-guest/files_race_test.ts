/**
 * The file jail under a real race: a child process swaps a folder of the workspace with a link to
 * a folder outside it (renameat2 RENAME_EXCHANGE, as fast as it can) while many requests use a
 * path through that folder. Whatever the timing, nothing outside is read, listed, written,
 * deleted or moved. The guest runs as its own process (`gurt guest`), as it does in use.
 */
import { assert, assertEquals } from "../assert.ts";
import { call, type DaemonUnderTest, startDaemon } from "./helpers.ts";

const RACE_MS = 2500;
const PARALLEL = 4;

/** Compiles the flipper (tests/fixtures/exec-guest/flipper.c) once into a temporary folder. */
async function flipperBinary(): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-flipper-" });
  const source = new URL("../fixtures/exec-guest/flipper.c", import.meta.url).pathname;
  const built = await new Deno.Command("gcc", {
    args: ["-O2", "-o", `${dir}/flipper`, source],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!built.success) {
    throw new Error(`gcc could not build the flipper: ${new TextDecoder().decode(built.stderr)}`);
  }
  return { path: `${dir}/flipper`, remove: () => Deno.remove(dir, { recursive: true }) };
}

/** Swaps ws/d and ws/l until stopped; resolves once the first swap happened. */
async function startFlipping(
  binary: string,
  workspace: string,
): Promise<{ stop: () => Promise<void> }> {
  const child = new Deno.Command(binary, {
    args: [workspace, "d", "l", String(Math.ceil(RACE_MS / 1000) + 90)],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const first = await reader.read();
  if (first.done || !first.value.includes("flipping")) {
    const status = await child.status;
    throw new Error(`the flipper did not start (exit ${status.code})`);
  }
  return {
    stop: async () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // It had ended on its own.
      }
      await child.status;
      await reader.cancel();
      await child.stderr.cancel();
    },
  };
}

/** ws/d is a folder, ws/l a link to a folder outside; both hold the same names. */
async function layout(guest: DaemonUnderTest, outside: string, names: string[]): Promise<void> {
  await Deno.mkdir(`${guest.workspace}/d`);
  await Deno.symlink(outside, `${guest.workspace}/l`);
  await Deno.mkdir(`${guest.workspace}/moved`);
  for (const name of names) {
    await Deno.writeTextFile(`${guest.workspace}/d/${name}`, "inside");
    await Deno.writeTextFile(`${outside}/${name}`, "outside");
  }
  await Deno.writeTextFile(`${outside}/only-outside.txt`, "outside");
}

/** The fewest requests a race runs, however slow the machine is (within a minute). */
const MIN_RUNS = 200;

/**
 * Runs `work(i)` on PARALLEL loops until RACE_MS has passed and MIN_RUNS have run (a loaded
 * machine runs fewer in RACE_MS), or a minute; returns how many ran.
 */
async function hammer(work: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  const going = () => {
    const spent = performance.now() - started;
    return spent < 60_000 && (spent < RACE_MS || next < MIN_RUNS);
  };
  const loop = async () => {
    while (going()) await work(next++);
  };
  await Promise.all(Array.from({ length: PARALLEL }, loop));
  return next;
}

async function race(
  names: string[],
  work: (guest: DaemonUnderTest, i: number) => Promise<void>,
  check: (guest: DaemonUnderTest, outside: string, ran: number) => Promise<void>,
): Promise<void> {
  const binary = await flipperBinary();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "gurt-outside-" }));
  const guest = await startDaemon();
  try {
    await layout(guest, outside, names);
    const flipper = await startFlipping(binary.path, guest.workspace);
    let ran = 0;
    try {
      ran = await hammer((i) => work(guest, i));
    } finally {
      await flipper.stop();
    }
    await check(guest, outside, ran);
  } finally {
    await guest.stop();
    await Deno.remove(outside, { recursive: true });
    await binary.remove();
  }
}

Deno.test("under a folder/link swap race, GET /v1/files and the raw GET never return a file outside the workspace", async () => {
  const leaks: string[] = [];
  let served = 0;
  await race(["secret.txt"], async (guest, i) => {
    const url = i % 2 === 0
      ? `${guest.exec}/v1/files?path=d/secret.txt`
      : `${guest.exec}/v1/files/raw?path=d/secret.txt`;
    const answer = await call(guest, url);
    const content = i % 2 === 0 ? answer.body?.content : answer.text;
    if (answer.status === 200) served++;
    if (answer.status === 200 && content !== "inside") leaks.push(`${url}: ${answer.text}`);
  }, (_guest, _outside, ran) => {
    assert(ran > 100, `only ${ran} reads ran during the race`);
    assert(served > 0, "some reads must still be served while the race runs");
    return Promise.resolve();
  });
  assertEquals(leaks.slice(0, 3), [], `${leaks.length} reads returned the outside file`);
});

Deno.test("under a folder/link swap race, listing a folder never lists a folder outside the workspace", async () => {
  const leaks: string[] = [];
  await race(["secret.txt"], async (guest) => {
    const answer = await call(guest, `${guest.exec}/v1/files?path=d`);
    const names = (answer.body?.entries ?? []).map((entry: { name: string }) => entry.name);
    if (names.includes("only-outside.txt")) leaks.push(answer.text);
  }, (_guest, _outside, ran) => {
    assert(ran > 100, `only ${ran} listings ran during the race`);
    return Promise.resolve();
  });
  assertEquals(leaks.slice(0, 3), [], `${leaks.length} listings showed the outside folder`);
});

Deno.test("under a folder/link swap race, PUT /v1/files never writes outside the workspace", async () => {
  await race([], async (guest, i) => {
    const url = `${guest.exec}/v1/files`;
    await call(guest, url, { method: "PUT", json: { path: `d/w${i}`, content: "written" } });
  }, (_guest, outside, ran) => {
    assert(ran > 100, `only ${ran} writes ran during the race`);
    const written = [...Deno.readDirSync(outside)].filter((entry) => entry.name.startsWith("w"));
    assertEquals(written.length, 0, `${written.length} writes landed outside`);
    return Promise.resolve();
  });
});

const NAMES = Array.from({ length: 4000 }, (_, i) => `f${i}`);

/** The names of NAMES no longer in the folder outside. */
function goneFrom(outside: string): string[] {
  const left = new Set([...Deno.readDirSync(outside)].map((entry) => entry.name));
  return NAMES.filter((name) => !left.has(name));
}

Deno.test("under a folder/link swap race, DELETE /v1/files never deletes a file outside the workspace", async () => {
  await race(NAMES, async (guest, i) => {
    const name = NAMES[i % NAMES.length];
    await call(guest, `${guest.exec}/v1/files?path=d/${name}`, { method: "DELETE" });
  }, (_guest, outside, ran) => {
    assert(ran > 100, `only ${ran} deletes ran during the race`);
    const gone = goneFrom(outside);
    assertEquals(gone.slice(0, 3), [], `${gone.length} files outside were deleted`);
    return Promise.resolve();
  });
});

Deno.test("under a folder/link swap race, POST /v1/files/move never moves a file from outside the workspace", async () => {
  await race(NAMES, async (guest, i) => {
    const name = NAMES[i % NAMES.length];
    await call(guest, `${guest.exec}/v1/files/move`, {
      method: "POST",
      json: { from: `d/${name}`, to: `moved/${name}-${i}` },
    });
  }, async (guest, outside, ran) => {
    assert(ran > 100, `only ${ran} moves ran during the race`);
    const gone = goneFrom(outside);
    assertEquals(gone.slice(0, 3), [], `${gone.length} files outside were moved`);
    for (const entry of Deno.readDirSync(`${guest.workspace}/moved`)) {
      const text = await Deno.readTextFile(`${guest.workspace}/moved/${entry.name}`);
      assertEquals(text, "inside", `moved/${entry.name} came from outside the workspace`);
    }
  });
});
