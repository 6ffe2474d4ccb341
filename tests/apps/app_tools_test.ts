/**
 * An app's tools as the box offers them (mod/apps/app_tools.ts): box verbs from server names,
 * what is left out and why, schemas compiled with Ajv (and what is refused before Ajv), and the
 * sentence an input that does not fit gets.
 */
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { boxVerb, inputProblem, LINEAR_PATTERNS, offeredTools } from "../../mod/apps/app_tools.ts";

const object = { type: "object", properties: { m: { type: "string" } }, required: ["m"] };

Deno.test("a server's tool names become snake-case box verbs, never with __ (gurt mcp's dot)", () => {
  assertEquals(boxVerb("get-env"), "get_env");
  assertEquals(boxVerb("getEnv"), "get_env");
  assertEquals(boxVerb("Echo"), "echo");
  assertEquals(boxVerb("a__b"), "a_b");
  assertEquals(boxVerb("list.items"), "list_items");
  assertEquals(boxVerb("_private"), null);
  assertEquals(boxVerb("9lives"), null);
  assertEquals(boxVerb("x".repeat(65)), null);
  assertEquals(boxVerb("Ω"), null);
});

Deno.test("tools that make no verb, or the same verb, or a schema that cannot be used, are left out with why", () => {
  const { tools, leftOut } = offeredTools("app", [
    { name: "echo", inputSchema: object },
    { name: "get-env", inputSchema: object },
    { name: "getEnv", inputSchema: object },
    { name: "_x", inputSchema: object },
    { name: "arr", inputSchema: { type: "array" } },
    { name: "bad", inputSchema: { type: "object", properties: { a: { type: "nonsense" } } } },
    { name: "huge", inputSchema: { type: "object", description: "x".repeat(300_000) } },
    { name: "deep", inputSchema: { type: "object", properties: nest(70) } },
    { name: 5 as unknown as string, inputSchema: object },
  ], new Map([["echo", { costCents: 4, description: "mine" }]]));
  assertEquals(tools.map((tool) => [tool.boxName, tool.costCents, tool.description]), [
    ["app.echo", 4, "mine"],
  ]);
  const why = Object.fromEntries(leftOut.map((left) => [left.serverName, left.problem]));
  assert(why["get-env"].includes("are both app.get_env"), why["get-env"]);
  assert(why["getEnv"].includes("are both app.get_env"), why["getEnv"]);
  assert(why["_x"].includes("makes no box tool name"), why["_x"]);
  assert(why["arr"].includes('type is not "object"'), why["arr"]);
  assert(why["bad"].includes("does not compile"), why["bad"]);
  assert(why["huge"].includes("more than 262144"), why["huge"]);
  assert(why["deep"].includes("nests deeper than 64"), why["deep"]);
  assert(why["5"].includes("no name"), why["5"]);
});

Deno.test("more than 1000 tools are refused whole", () => {
  const many = Array.from({ length: 1001 }, (_, i) => ({ name: `t${i}`, inputSchema: object }));
  assertThrows(() => offeredTools("app", many, new Map()), Error, "more than 1000");
});

Deno.test("an input is checked against the server's schema: draft-07 where it says so, else 2020-12", () => {
  const { tools } = offeredTools("app", [
    {
      name: "old",
      inputSchema: { $schema: "http://json-schema.org/draft-07/schema#", ...object },
    },
    // 2020-12's prefixItems: draft-07 would ignore it and let the wrong item through.
    {
      name: "new",
      inputSchema: {
        type: "object",
        properties: { pair: { type: "array", prefixItems: [{ type: "string" }] } },
        $id: "https://example.com/reused-id",
      },
    },
    { name: "again", inputSchema: { type: "object", $id: "https://example.com/reused-id" } },
  ], new Map());
  const [again, fresh, old] = tools;
  assertEquals(inputProblem(old, { m: "x" }), null);
  assertEquals(inputProblem(old, { m: 1 }), "input/m must be string");
  assertEquals(inputProblem(fresh, { pair: ["a"] }), null);
  assertEquals(inputProblem(fresh, { pair: [1] }), "input/pair/0 must be string");
  assertEquals(inputProblem(again, {}), null);
  assertEquals(inputProblem(old, "text"), "the input must be object");
});

function nest(depth: number): Record<string, unknown> {
  let inner: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < depth; i++) inner = { type: "object", properties: { a: inner } };
  return { a: inner };
}

Deno.test({
  name:
    "schema patterns run in V8's linear engine: one that backtracks badly is fast, one it cannot run is left out",
  ignore: !LINEAR_PATTERNS,
  fn: () => {
    const { tools, leftOut } = offeredTools("app", [
      {
        name: "redos",
        inputSchema: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } },
      },
      {
        name: "backref",
        inputSchema: { type: "object", properties: { s: { type: "string", pattern: "(a)\\1" } } },
      },
      {
        name: "keys",
        inputSchema: { type: "object", patternProperties: { "^(x+)+$": { type: "number" } } },
      },
    ], new Map());
    assertEquals(tools.map((tool) => tool.boxName), ["app.keys", "app.redos"]);
    assertEquals(leftOut.map((left) => left.serverName), ["backref"]);
    assert(leftOut[0].problem.includes("linear"), leftOut[0].problem);
    const [keys, redos] = tools;
    // 2^40 steps for a backtracking engine; the test would not end.
    assertEquals(
      inputProblem(redos, { s: `${"a".repeat(40)}!` }),
      'input/s must match pattern "^(a+)+$"',
    );
    assertEquals(inputProblem(keys, { [`${"x".repeat(40)}!`]: "n" }), null);
  },
});
