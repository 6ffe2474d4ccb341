/** Test helpers: RunSpecs built the only way there is (a real decision), and a runtime on them. */
import { parseConfig } from "../../mod/config/mod.ts";
import { decide } from "../../mod/policy/mod.ts";
import { type RunSpec, runSpecFor, type RuntimeSettings } from "../../mod/runtime/mod.ts";
import { at, grantSet, type GrantSpec } from "../policy/helpers.ts";

/** The spec for a call allowed by one auto grant; throws if the grant does not allow it. */
export function specFor(grant: GrantSpec, tool: string, input: unknown): RunSpec {
  const outcome = decide({ tool, arguments: input }, grantSet({ g: grant }), at());
  if (outcome.kind !== "allowed") {
    throw new Error(`the test grant does not allow the call: ${JSON.stringify(outcome)}`);
  }
  return runSpecFor(outcome.decision);
}

/** The [runtime] settings: the defaults, with some replaced. */
export function settings(extra: Partial<RuntimeSettings> = {}): RuntimeSettings {
  return { ...parseConfig("gurt.toml", "").runtime, ...extra };
}
