/**
 * The type test for RunSpec: code outside mod/runtime cannot build one except from a Decision,
 * which only mod/policy builds. `deno check` runs on this file as part of `deno task test`; every
 * `@ts-expect-error` below fails that check if the line after it ever compiles. Nothing here runs.
 */
import { RunSpec } from "../../mod/runtime/mod.ts";

/** Never called: these lines exist only to be type-checked. */
export function forbidden(fields: never): void {
  // @ts-expect-error RunSpec's constructor is private: only runSpecFor builds one, from a Decision.
  new RunSpec(fields, fields, fields, fields);
  // @ts-expect-error An object with a RunSpec's fields is not a RunSpec (its brand is unexported).
  const forged: RunSpec = {
    tool: "shell",
    args: { kind: "shell", command: "cat /etc/shadow", cwd: null },
    mounts: [{ path: "/etc", writable: true }],
    egress: null,
  };
  // @ts-expect-error fromDecision takes only a Decision, which only mod/policy can build.
  RunSpec.fromDecision({ tool: "shell" });
  void forged;
}
