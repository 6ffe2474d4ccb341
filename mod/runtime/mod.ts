/** The runtime seam: RunSpec, Runtime, and the runtimes. */
export {
  type Mount,
  RefusingRuntime,
  RunError,
  type RunOutput,
  RunSpec,
  runSpecFor,
  type Runtime,
} from "./run_spec.ts";
