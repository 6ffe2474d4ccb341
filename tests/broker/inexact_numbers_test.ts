/**
 * A number JSON.parse would change (1e400 to Infinity, stored as null; 1e-400 to 0; 2^53+1 to
 * 2^53) is refused with a 400 that names the field, on every task-socket body that is stored
 * (/step, /call, /ask, /cost, /usage), and nothing is journalled or run; numbers a double keeps
 * (1.50, 15e-1, 2^53, 0.1) are taken as before. Through a real core and its task socket.
 */
import { assert, assertEquals } from "../assert.ts";
import { counter, type Json, withBox } from "../kit/mod.ts";
import { requestRaw } from "../../mod/net/mod.ts";

async function post(
  socket: string,
  path: string,
  text: string,
): Promise<{ status: number; body: Json }> {
  const answer = await requestRaw(socket, { method: "POST", path, body: text });
  return { status: answer.status, body: JSON.parse(new TextDecoder().decode(answer.body)) };
}

const CHANGED = [
  "1e400",
  "-1e400",
  "1e-400",
  "9007199254740993",
  "0.1000000000000000055511151231257827",
];

Deno.test("/step refuses each number JSON would change, naming the field, and journals nothing", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    for (const number of CHANGED) {
      const answer = await post(task.socket, "/step", `{"text":"t","data":{"x":[1,${number}]}}`);
      assertEquals(answer.status, 400, number);
      assert(
        answer.body.error.startsWith(`data.x.1: the number ${number.slice(0, 40)}`),
        answer.body.error,
      );
      assert(answer.body.error.endsWith("send it as a string"), answer.body.error);
    }
    assertEquals((await task.request("GET", "/task")).body.steps, []);
    const journal = await Deno.readTextFile(`${box.home}/tasks/${task.id}/journal.jsonl`).catch(
      () => "",
    );
    assert(!journal.includes('"step"'), journal);
    // What a double keeps is taken, and stored as sent.
    const kept = await post(
      task.socket,
      "/step",
      '{"text":"t","data":{"a":1.50,"b":15e-1,"c":9007199254740992,"d":0.1,"e":1e21,"f":-0}}',
    );
    assertEquals(kept, { status: 200, body: { ok: true } });
    const step = (await Deno.readTextFile(`${box.home}/tasks/${task.id}/journal.jsonl`)).trim()
      .split("\n")
      .map((line) => JSON.parse(line)).find((line) => line.type === "step");
    assertEquals(step.data, { a: 1.5, b: 1.5, c: 9007199254740992, d: 0.1, e: 1e21, f: 0 });
  });
});

Deno.test("/call, /ask, /cost and /usage refuse a number JSON would change, naming the field, and nothing runs", async () => {
  const count = counter();
  await withBox(count.options, async (box) => {
    const task = await box.startTask({ tools: ["test.count"] });
    const cases: [string, string, string][] = [
      ["/call", '{"tool":"test.count","input":{"n":1e400},"key":"k1"}', "input.n"],
      ["/call", '{"tool":"test.count","input":{"n":9007199254740993},"key":"k2"}', "input.n"],
      ["/ask", '{"question":"q","key":"a1","costCents":1e-400}', "costCents"],
      ["/cost", '{"cents":1e400,"what":"x"}', "cents"],
      [
        "/usage",
        '{"model":"claude-sonnet-4-5","tokens":{"input":9007199254740993,"output":1}}',
        "tokens.input",
      ],
    ];
    for (const [path, text, field] of cases) {
      const answer = await post(task.socket, path, text);
      assertEquals(answer.status, 400, `${path} ${text}: ${JSON.stringify(answer.body)}`);
      assert(answer.body.error.startsWith(`${field}: the number `), answer.body.error);
    }
    assertEquals(count.runs, []);
    assertEquals(
      (await box.records()).filter((r) => r.event.type === "decision" || r.event.type === "cost"),
      [],
    );
    assertEquals(await task.call("test.count", { n: 2 }, "k3"), { ok: true, output: { runs: 1 } });
  });
});

Deno.test("a number of 60,000 digits with zeros inside is judged at once, not in seconds of the core's one thread", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    // 1.000…0001 is 1 as a double: refused. Trimming its zeros with /0+$/ tried every run of
    // zeros to its end, some 18 s for this /step body (under its 64 KiB) on the old check.
    const number = `1.${"0".repeat(60_000)}1`;
    const started = performance.now();
    const answer = await post(task.socket, "/step", `{"text":"t","data":{"x":${number}}}`);
    const took = performance.now() - started;
    assertEquals(answer.status, 400);
    assert(answer.body.error.startsWith("data.x: the number 1.000"), answer.body.error);
    assert(took < 2_000, `the check took ${Math.round(took)} ms`);
  });
});
