/** The count of a request body's JSON objects and arrays, made before it is parsed. */
import { assertEquals } from "../assert.ts";
import { moreContainersThan } from "../../mod/model-proxy/json_containers.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("objects and arrays are counted up to the bound, brackets in strings are not", () => {
  assertEquals(moreContainersThan(bytes('{"a":[{},[]]}'), 4), false);
  assertEquals(moreContainersThan(bytes('{"a":[{},[]]}'), 3), true);
  assertEquals(moreContainersThan(bytes('{"a":"[[[{{{"}'), 1), false);
  // An escaped quote does not end the string, so the brackets after it are still inside it.
  assertEquals(moreContainersThan(bytes('{"a":"\\"[[[\\\\"}'), 1), false);
  assertEquals(moreContainersThan(bytes('{"a":"\\\\",  "b":[[]]}'), 2), true);
});

Deno.test("a 20 MiB body of {}s is counted past the bound in a moment", () => {
  const body = bytes(`[${new Array(7_000_000).fill("{}").join(",")}]`);
  const started = performance.now();
  assertEquals(moreContainersThan(body, 200_000), true);
  assertEquals(moreContainersThan(bytes(`"${"[".repeat(20 * 1024 * 1024)}"`), 0), false);
  const ms = performance.now() - started;
  assertEquals(ms < 2000, true, `${ms} ms`);
});
