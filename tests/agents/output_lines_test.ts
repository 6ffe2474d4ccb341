/** The reading of an agent's output one JSON object a line, shared by the four adapters. */
import { assertEquals } from "../assert.ts";
import { nonEmptyString, objectOf, objectsOf, textOf } from "../../mod/agents/output_lines.ts";

Deno.test("objectOf: one JSON object a line, anything else null", () => {
  assertEquals(objectOf(' {"type":"result","n":1} '), { type: "result", n: 1 });
  assertEquals(objectOf(""), null);
  assertEquals(objectOf("Reconnecting... waiting for network"), null);
  assertEquals(objectOf("{not json"), null);
  assertEquals(objectOf("[1,2]"), null);
  assertEquals(objectOf("null"), null);
  assertEquals(objectOf('"{}"'), null);
});

Deno.test("objectsOf: the objects of every line of an output, null where a line holds none", () => {
  assertEquals(objectsOf('{"a":1}\nnoise\n{"b":2}\n'), [{ a: 1 }, null, { b: 2 }, null]);
});

Deno.test("nonEmptyString: a string with something in it, else null", () => {
  assertEquals(nonEmptyString("ses_1"), "ses_1");
  assertEquals(nonEmptyString(""), null);
  assertEquals(nonEmptyString(7), null);
  assertEquals(nonEmptyString(undefined), null);
});

Deno.test("textOf: a string, even empty, else null", () => {
  assertEquals(textOf("done"), "done");
  assertEquals(textOf(""), "");
  assertEquals(textOf(null), null);
  assertEquals(textOf({ text: "x" }), null);
});
