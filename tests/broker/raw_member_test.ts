/** rawMember: the member's text as received, which parses to what JSON.parse gives for it. */
import fc from "fast-check";
import { rawMember } from "../../mod/broker/raw_member.ts";
import { assertEquals } from "../assert.ts";

Deno.test("rawMember gives the member's exact text, the last of a repeated name, and null where there is none", () => {
  assertEquals(
    rawMember('{"a":1, "input" : {"p" : "\\u002fetc"} ,"k":2}', "input"),
    '{"p" : "\\u002fetc"}',
  );
  assertEquals(rawMember('{"input":1,"input":[2, 3]}', "input"), "[2, 3]");
  assertEquals(rawMember('{"a":{"input":1}}', "input"), null);
  assertEquals(rawMember("[1]", "input"), null);
});

Deno.test("rawMember's text parses to the member JSON.parse finds, for any object written with any spacing", () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.jsonValue(),
      fc.integer({ min: 0, max: 4 }),
      (rest, input, indent) => {
        const text = JSON.stringify({ ...rest, input }, null, indent);
        const raw = rawMember(text, "input");
        assertEquals(JSON.parse(raw!), JSON.parse(text).input);
      },
    ),
  );
});
