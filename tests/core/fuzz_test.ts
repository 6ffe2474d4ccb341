/**
 * Bad input on both sockets (fast-check; the seed is in the failure message): malformed JSON,
 * wrong types, unknown fields, huge and deeply nested bodies, invalid UTF-8 and truncated
 * requests. Each gets a 4xx with a clear error, the core stays up, and nothing is written but
 * what the rules say: the audit log holds only the task's start and still verifies.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { verifyHome } from "../../mod/audit/mod.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import {
  parseResponse,
  rawJson,
  requestBytes,
  sendBytes,
  type TestBox,
  withBox,
} from "../kit/mod.ts";

const SMALL = 64 * 1024;
const TASK_TOTAL = 1024 * 1024;

/** A POST route, its body's typed fields, a valid body, and the largest body it reads. */
interface PostRoute {
  socket: "task" | "admin";
  path: string;
  fields: Record<string, "string" | "number">;
  valid: Record<string, unknown>;
  limit: number;
}

const POST_ROUTES: PostRoute[] = [
  { socket: "task", path: "/step", fields: { text: "string" }, valid: { text: "x" }, limit: SMALL },
  {
    socket: "task",
    path: "/call",
    fields: { tool: "string", key: "string" },
    valid: { tool: "example.echo", input: { text: "x" }, key: "k" },
    limit: TASK_TOTAL,
  },
  {
    socket: "task",
    path: "/ask",
    fields: { question: "string", key: "string", costCents: "number" },
    valid: { question: "may I?", key: "a" },
    limit: SMALL,
  },
  {
    socket: "task",
    path: "/cost",
    fields: { cents: "number", what: "string" },
    valid: { cents: 1, what: "x" },
    limit: SMALL,
  },
  {
    socket: "task",
    path: "/usage",
    fields: { model: "string", what: "string" },
    valid: { model: "claude-sonnet-4-6", tokens: { input: 1, output: 1 } },
    limit: SMALL,
  },
  {
    socket: "admin",
    path: "/approvals/1/approve",
    fields: { by: "string" },
    valid: { by: "me" },
    limit: SMALL,
  },
  {
    socket: "admin",
    path: "/approvals/1/refuse",
    fields: { reason: "string" },
    valid: { reason: "no" },
    limit: SMALL,
  },
  {
    socket: "admin",
    path: "/tasks",
    fields: { prompt: "string", budgetCents: "number" },
    valid: { worker: { kind: "none" }, tools: ["example.echo"] },
    limit: 2 * 1024 * 1024,
  },
  {
    socket: "admin",
    path: "/tasks/TASK/stop",
    fields: { reason: "string" },
    valid: { reason: "x" },
    limit: SMALL,
  },
];

interface Case {
  route: PostRoute;
  body: Uint8Array;
  what: string;
}

const encode = (text: string) => new TextEncoder().encode(text);

const notString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
);
// (null is left out: budgetCents takes it.)
const notNumber = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.double({ noInteger: true }),
  fc.array(fc.integer(), { maxLength: 3 }),
);

const route = fc.constantFrom(...POST_ROUTES);

/** Text that JSON.parse refuses: valid JSON cut short, or junk after a brace. */
const malformed = fc.tuple(route, fc.jsonValue(), fc.nat(), fc.string({ maxLength: 20 })).map(
  ([r, value, cut, junk]): Case => {
    const text = JSON.stringify({ ...r.valid, extra: value });
    // (An empty body is not among them: it is how an optional body is left out.)
    const options = [text.slice(0, 1 + cut % (text.length - 2)), `{${junk}`, `${text}}`, "nul"];
    return { route: r, body: encode(options[cut % options.length]), what: "malformed JSON" };
  },
);

/** A body that is not an object, or a typed field given a value of another type. */
const wrongType = fc.tuple(route, fc.nat(), notString, notNumber, fc.jsonValue()).map(
  ([r, pick, s, n, top]): Case => {
    const names = Object.keys(r.fields);
    const name = names[pick % names.length];
    const body = pick % 4 === 0 && (Array.isArray(top) || typeof top !== "object" || top === null)
      ? top
      : { ...r.valid, [name]: r.fields[name] === "string" ? s : n };
    return { route: r, body: encode(JSON.stringify(body)), what: "wrong type" };
  },
);

/** A valid body with one field the schema does not know. */
const unknownField = fc.tuple(route, fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue())
  .filter(([r, name]) => !(name in r.valid) && !(name in r.fields) && !KNOWN.has(name))
  .map(([r, name, value]): Case => ({
    route: r,
    body: encode(JSON.stringify({ ...r.valid, [name]: value })),
    what: "unknown field",
  }));
const KNOWN = new Set([
  "input",
  "data",
  "payee",
  "purpose",
  "tokens",
  "worker",
  "tools",
  "prompt",
  "budgetCents",
  "key",
  "costCents",
  "what",
  "__proto__",
]);

/** Brackets nested deeper than gurt takes, inside a field that accepts any JSON. */
const deep = fc.tuple(route, fc.integer({ min: 129, max: 20_000 }), fc.boolean()).map(
  ([r, depth, objects]): Case => {
    const open = objects ? '{"a":'.repeat(depth) : "[".repeat(depth);
    const close = objects ? "}".repeat(depth) : "]".repeat(depth);
    const inner = `${open}1${close}`;
    // The field that takes any JSON: a step's data, a call's input; elsewhere a field of its own
    // (the depth is checked before the fields are).
    const field = r.path === "/call" ? "input" : "data";
    const text = JSON.stringify({ ...r.valid, [field]: 0 }).replace(
      `"${field}":0`,
      `"${field}":${inner}`,
    );
    return { route: r, body: encode(text), what: "deeply nested" };
  },
);

/** A body one byte over the route's limit. */
const huge = fc.tuple(route, fc.nat(100)).map(([r, more]): Case => {
  const size = r.limit + 1 + more;
  const prefix = '{"text":"';
  const body = new Uint8Array(size).fill(0x61);
  body.set(encode(prefix));
  body[size - 2] = 0x22;
  body[size - 1] = 0x7d;
  return { route: r, body, what: "huge" };
});

/** A JSON string holding bytes that are not UTF-8. */
const invalidUtf8 = fc.tuple(
  route,
  fc.constantFrom([0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x28, 0x8c, 0x28], [0xed, 0xa0, 0x80]),
).map(([r, bad]): Case => {
  const head = encode('{"text":"');
  const tail = encode('"}');
  const body = new Uint8Array(head.length + bad.length + tail.length);
  body.set(head);
  body.set(bad, head.length);
  body.set(tail, head.length + bad.length);
  return { route: r, body, what: "invalid UTF-8" };
});

function socketOf(box: TestBox, task: { socket: string }, r: PostRoute): string {
  return r.socket === "task" ? task.socket : adminSocketPath(box.home);
}

async function expectClientError(box: TestBox, task: { id: string; socket: string }, c: Case) {
  const path = c.route.path.replace("TASK", task.id);
  const raw = await sendBytes(
    socketOf(box, task, c.route),
    requestBytes({ method: "POST", path, body: c.body }),
  );
  const answer = parseResponse(raw);
  const label = `${c.what} to ${c.route.path}: ${answer.status} ${answer.text.slice(0, 200)}`;
  assert(answer.status >= 400 && answer.status < 500, label);
  assertEquals(typeof answer.body.error, "string", label);
  assert(answer.body.error.length > 10, label);
  if (c.what === "huge") assertEquals(answer.status, 413, label);
  if (c.what === "invalid UTF-8" || c.what === "deeply nested") {
    assertEquals(answer.status, c.body.length > c.route.limit ? 413 : 400, label);
  }
  if (c.what === "deeply nested" && answer.status === 400) {
    assert(answer.body.error.includes("levels deep"), label);
  }
}

async function stillUp(box: TestBox, task: { socket: string }): Promise<void> {
  assertEquals((await rawJson(task.socket, { method: "GET", path: "/tools" })).status, 200);
  assertEquals(
    (await rawJson(adminSocketPath(box.home), { method: "GET", path: "/approvals" })).status,
    200,
  );
}

Deno.test("every POST route of both sockets answers bad bodies with a 4xx and a sentence, and writes nothing", async () => {
  await withBox({ toml: `[broker]\nmax_task_bytes = ${TASK_TOTAL}\n` }, async (box) => {
    const task = await box.startTask();
    for (
      const [arbitrary, numRuns] of [
        [malformed, 150],
        [wrongType, 150],
        [unknownField, 150],
        [deep, 40],
        [invalidUtf8, 40],
        [huge, 20],
      ] as const
    ) {
      await fc.assert(
        fc.asyncProperty(arbitrary, (c) => expectClientError(box, task, c)),
        { numRuns },
      );
      await stillUp(box, task);
    }
    const types = (await box.records()).map((r) => r.event.type);
    assertEquals(types, ["task_started"]);
    assertEquals((await verifyHome(box.home)).failure, null);
  });
});

Deno.test("path parameters that are not ids answer 400 or 404 on the admin socket", async () => {
  await withBox({}, async (box) => {
    await fc.assert(
      // "." and ".." are dot segments, not parameters: a URL reads /tasks/. as /tasks/ (a path no
      // route answers, forbidden on this socket), as every HTTP stack does.
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 40 }).filter((text) => text !== "." && text !== ".."),
        async (text) => {
          const id = encodeURIComponent(text);
          for (
            const [method, path] of [
              ["GET", `/tasks/${id}`],
              ["POST", `/tasks/${id}/stop`],
              ["POST", `/approvals/${id}/approve`],
              ["POST", `/approvals/${id}/refuse`],
            ]
          ) {
            const answer = await rawJson(adminSocketPath(box.home), { method, path });
            assert([400, 404].includes(answer.status), `${method} ${path}: ${answer.text}`);
            assertEquals(typeof answer.body.error, "string");
          }
        },
      ),
      { numRuns: 100 },
    );
    assertEquals((await box.records()).length, 0);
  });
});

Deno.test("truncated requests (body or headers cut short) get a 4xx or a closed connection, and the core stays up", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...POST_ROUTES),
        fc.nat(),
        fc.boolean(),
        async (r, cut, headersOnly) => {
          const path = r.path.replace("TASK", task.id);
          const whole = requestBytes({ method: "POST", path, body: JSON.stringify(r.valid) });
          const headEnd = new TextDecoder().decode(whole).indexOf("\r\n\r\n") + 4;
          // Cut inside the headers, or inside the body (the declared length is never reached).
          const at = headersOnly
            ? 1 + cut % (headEnd - 2)
            : headEnd + cut % Math.max(1, whole.length - headEnd);
          const raw = await sendBytes(socketOf(box, task, r), whole.subarray(0, at), true);
          if (raw !== "") {
            const status = parseResponse(raw).status;
            assert(status >= 400 && status < 500, `${r.path} cut at ${at}: ${raw.slice(0, 200)}`);
          }
        },
      ),
      { numRuns: 100 },
    );
    await stillUp(box, task);
    assertEquals((await box.records()).map((r) => r.event.type), ["task_started"]);
    assertEquals((await verifyHome(box.home)).failure, null);
  });
});

Deno.test("caps: a step, question or cost over 64 KB is a 413; past the task's total bytes, 429 with its runbook pointer", async () => {
  await withBox({ toml: "[broker]\nmax_task_bytes = 300000\n" }, async (box) => {
    const task = await box.startTask();
    const big = "x".repeat(SMALL);
    for (
      const [path, body] of [
        ["/step", { text: big }],
        ["/ask", { question: big, key: "a" }],
        ["/cost", { cents: 1, what: big }],
      ] as const
    ) {
      const answer = await task.request("POST", path, body);
      assertEquals(answer.status, 413, path);
      assert(answer.body.error.includes(`${SMALL} bytes`), answer.body.error);
    }
    // A call's input counts toward the total only: 100 KB calls pass until 300 KB is reached.
    const input = { text: "y".repeat(100_000) };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await task.request("POST", "/call", { tool: "example.echo", input, key: `c${i}` })).status,
      );
    }
    assertEquals(statuses, [200, 200, 429, 429]);
    // About 200 KB counted so far: one 60 KB step fits, the next goes past 300 KB.
    const fits = await task.request("POST", "/step", { text: "z".repeat(60_000) });
    assertEquals(fits.status, 200);
    const over = await task.request("POST", "/step", { text: "z".repeat(60_000) });
    assertEquals(over.status, 429);
    assert(over.body.error.includes("see runbook.md#task-write-limit"));
  });
});
