/** The vault file's text: NAME=value lines, set-time comments, and errors that never show a line. */
import { assertEquals, assertNotIncludes, assertThrows } from "../assert.ts";
import { parseVaultText, renderVaultText } from "../../mod/vault/mod.ts";

Deno.test("a vault text keeps values byte for byte, comments in place, and set times as comments", () => {
  const text = "# my keys\n# set A_KEY 2026-11-29T10:00:00.000Z\nA_KEY= spaced =value \n\nB=x\n";
  const document = parseVaultText(text, "/v");
  assertEquals(document.lines, [
    { kind: "other", text: "# my keys" },
    { kind: "key", name: "A_KEY", value: " spaced =value " },
    { kind: "other", text: "" },
    { kind: "key", name: "B", value: "x" },
  ]);
  assertEquals(document.setTimes.get("A_KEY"), "2026-11-29T10:00:00.000Z");
  assertEquals(renderVaultText(document), text);
});

Deno.test("a line that is not NAME=value is refused by file and line, without its content", () => {
  for (
    const line of ["lower=sk-should-not-show", "export A=sk-should-not-show", "sk-should-not-show"]
  ) {
    const error = assertThrows(
      () => parseVaultText(`A=1\n${line}\n`, "/etc/box/vault.env"),
      Error,
      "/etc/box/vault.env:2: this line is not NAME=value",
    );
    assertNotIncludes(error.message, "sk-should-not-show");
    assertEquals(error.message.endsWith("see runbook.md#vault-format"), true);
  }
});

Deno.test("a key set twice is refused, naming both lines", () => {
  assertThrows(
    () => parseVaultText("A=1\nB=2\nA=3\n", "/v"),
    Error,
    "/v:3: the key A is already set at line 1",
  );
});
