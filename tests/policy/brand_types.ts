/**
 * The type test: code outside mod/policy cannot build a Decision or an Ask. `deno check` runs on
 * this file as part of `deno task test`; every `@ts-expect-error` below fails that check if the
 * line after it ever compiles. Nothing here runs.
 */
import { Ask, Decision } from "../../mod/policy/mod.ts";

/**
 * Never called: these lines exist only to be type-checked. `fields` is `never`, which fits any
 * parameter, so the only error a `new` line can have is the constructor's privacy.
 */
export function forbidden(fields: never): void {
  // @ts-expect-error Decision's constructor is private: only mod/policy/decide.ts builds one.
  new Decision(fields);
  // @ts-expect-error Ask's constructor is private: only mod/policy/decide.ts builds one.
  new Ask(fields, "grant");
  // @ts-expect-error An object with a Decision's getters is not a Decision (private #call).
  const forged: Decision = {
    tool: "read_file",
    args: { kind: "read_file", path: "/etc/shadow" },
    grant: "g",
    grantSha256: "0".repeat(64),
    matchedPath: "/etc",
    grantPaths: ["/etc"],
    hosts: [],
    label: { resultClass: "private", untrusted: false },
  };
  // @ts-expect-error Nor is an object with an Ask's getters an Ask.
  const forgedAsk: Ask = { tool: "read_file", why: "grant", expires: null };
  // @ts-expect-error The minting key is a symbol mod/policy does not export; no string names it.
  Decision["mint"](fields);
  // @ts-expect-error Subclassing cannot reach a private constructor either.
  class Sub extends Decision {}
  // @ts-expect-error An Ask is not a Decision: approval goes through redecide, never a cast.
  const approved: Decision = fields as Ask;
  void [forged, forgedAsk, Sub, approved];
}
