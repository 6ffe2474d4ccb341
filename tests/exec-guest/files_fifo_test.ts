/**
 * The file routes never wait on what is not a regular file: a write onto a FIFO (made with a real
 * mkfifo) is refused at once, with or without a reader, and writes nothing into it; reads are
 * refused as promptly. The guest runs as its own process, so that a request that hangs can be
 * ended by killing it instead of hanging the test.
 */
import * as fs from "node:fs";
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { type Answer, call, type DaemonUnderTest, startDaemon } from "./helpers.ts";

/** How long a refusal may take before the test calls it a hang. */
const PROMPT_MS = 5000;

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assertEquals(made.code, 0, "mkfifo");
}

/** Calls the guest; if it has not answered within PROMPT_MS, kills it and fails. */
async function prompt(
  guest: DaemonUnderTest,
  what: string,
  url: string,
  init: Parameters<typeof call>[2],
): Promise<Answer> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      Deno.kill(guest.pid, "SIGKILL");
      reject(new Error(`${what} did not answer within ${PROMPT_MS} ms: it waits on the FIFO`));
    }, PROMPT_MS);
  });
  try {
    return await Promise.race([call(guest, url, init), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function withFifo(work: (guest: DaemonUnderTest, fifo: string) => Promise<void>) {
  const guest = await startDaemon();
  try {
    await mkfifo(`${guest.workspace}/pipe`);
    await work(guest, `${guest.workspace}/pipe`);
  } finally {
    await guest.stop();
  }
}

function assertRefused(answer: Answer, what: string): void {
  assertEquals(answer.status, 400, `${what}: ${answer.text}`);
  assertEquals(answer.body.error.code, "invalid_request");
  assertStringIncludes(answer.body.error.message, "not a regular file");
}

Deno.test("PUT /v1/files onto a FIFO without a reader is refused at once", async () => {
  await withFifo(async (guest) => {
    const answer = await prompt(guest, "PUT /v1/files", `${guest.exec}/v1/files`, {
      method: "PUT",
      json: { path: "pipe", content: "hello" },
    });
    assertRefused(answer, "PUT /v1/files");
  });
});

Deno.test("the raw PUT onto a FIFO without a reader is refused at once", async () => {
  await withFifo(async (guest) => {
    const answer = await prompt(
      guest,
      "PUT /v1/files/raw",
      `${guest.exec}/v1/files/raw?path=pipe`,
      {
        method: "PUT",
        body: "hello",
        headers: { "content-type": "application/octet-stream" },
      },
    );
    assertRefused(answer, "PUT /v1/files/raw");
  });
});

Deno.test("a write onto a FIFO that has a reader is refused too, and nothing reaches the reader", async () => {
  await withFifo(async (guest, fifo) => {
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      for (
        const [what, url, init] of [
          ["PUT /v1/files", `${guest.exec}/v1/files`, {
            method: "PUT",
            json: { path: "pipe", content: "hello" },
          }],
          ["PUT /v1/files/raw", `${guest.exec}/v1/files/raw?path=pipe`, {
            method: "PUT",
            body: "hello",
            headers: { "content-type": "application/octet-stream" },
          }],
        ] as const
      ) {
        assertRefused(await prompt(guest, what, url, init), what);
      }
      let read = 0;
      try {
        read = fs.readSync(reader, new Uint8Array(64));
      } catch (error) {
        // EAGAIN: a writer was never there, or left nothing.
        assertEquals((error as { code?: string }).code, "EAGAIN");
      }
      assertEquals(read, 0, "no byte was written into the FIFO");
    } finally {
      fs.closeSync(reader);
    }
  });
});

Deno.test("GET /v1/files and the raw GET of a FIFO are refused at once", async () => {
  await withFifo(async (guest) => {
    for (
      const url of [`${guest.exec}/v1/files?path=pipe`, `${guest.exec}/v1/files/raw?path=pipe`]
    ) {
      assertRefused(await prompt(guest, `GET ${url}`, url, {}), url);
    }
  });
});
