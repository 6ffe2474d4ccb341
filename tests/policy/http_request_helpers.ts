/** Test helpers for http.request: grant files written to a real grants folder, loaded and decided. */
import {
  decideLoaded,
  type GrantLoad,
  HTTP_REQUEST_TOOL,
  loadGrants,
  type Mode,
  type Outcome,
} from "../../mod/policy/mod.ts";
import { standardRegistry } from "../../mod/tools/mod.ts";
import { withHome } from "../kit/mod.ts";
import { at } from "./helpers.ts";

/** The app tools of a standard box, as the core passes them. */
export const OPTIONS = { appTools: standardRegistry().appToolNames() };

/** One http.request grant as the owner writes it. */
export type HttpGrant = {
  mode?: Mode;
  hosts?: readonly string[];
  methods?: readonly string[];
  paths?: readonly string[];
};

/** The TOML text of an http.request grant file; mode auto unless given. */
export function httpGrant(spec: HttpGrant): string {
  const lines = [
    `tool = "${HTTP_REQUEST_TOOL}"`,
    `mode = ${JSON.stringify(spec.mode ?? "auto")}`,
    'max_taint = "secret"',
    'result_class = "private"',
    "",
    "[constraints]",
  ];
  for (const field of ["hosts", "methods", "paths"] as const) {
    if (spec[field] !== undefined) lines.push(`${field} = ${JSON.stringify(spec[field])}`);
  }
  return lines.join("\n") + "\n";
}

/** Runs `work` with a real, empty grants folder in a temporary box home. */
export function withGrantsDir(work: (dir: string) => Promise<void>): Promise<void> {
  return withHome((home) => work(`${home}/grants`), { prefix: "gurt-http-", dirs: ["grants"] });
}

/** Writes each grant file (id → TOML text) into `dir` and loads the folder. */
export async function writeAndLoad(dir: string, files: Record<string, string>): Promise<GrantLoad> {
  for (const [id, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${id}.toml`, text);
  }
  return await loadGrants(dir, OPTIONS);
}

/** Decides an http.request call against a load at private taint. */
export function decideRequest(load: GrantLoad, args: unknown): Outcome {
  return decideLoaded({ tool: HTTP_REQUEST_TOOL, arguments: args }, { load, ...at() });
}

/** An outcome in a word: allowed, ask, or `denied <reason>`; with the winning grant where one won. */
export function said(outcome: Outcome): string {
  switch (outcome.kind) {
    case "allowed":
      return `allowed ${outcome.decision.grant}`;
    case "ask":
      return `ask ${outcome.ask.grant}`;
    case "denied":
      return outcome.denial.grant === null
        ? `denied ${outcome.denial.reason}`
        : `denied ${outcome.denial.reason} ${outcome.denial.grant}`;
  }
}

/** A request's arguments. */
export function req(method: string, host: string, path: string): unknown {
  return { method, host, path };
}
