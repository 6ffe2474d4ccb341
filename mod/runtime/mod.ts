/** The runtime seam (RunSpec, Runtime) and the runtimes: the refusing one and the sandbox. */
export { isOwnAddress, isRestrictedAddress } from "./address_ranges.ts";
export {
  FETCH_ERRORS,
  type FetcherOptions,
  type FetchSettings,
  HttpFetcher,
} from "./http_fetch.ts";
export {
  callMemoryLimit,
  type CgroupPlan,
  cgroupPlan,
  CgroupSlots,
  memoryCgroupRoot,
  PIDS_CGROUP_ROOT,
  runtimeCgroupRoot,
  sweepCgroups,
} from "./process_cap.ts";
export {
  type Mount,
  RefusingRuntime,
  RunError,
  type RunOutput,
  RunSpec,
  runSpecFor,
  type Runtime,
  RUNTIME_UNAVAILABLE,
} from "./run_spec.ts";
export {
  bwrapArgs,
  SANDBOX_ENV,
  sandboxArgs,
  type SandboxCommand,
  sandboxCommand,
  systemArgs,
  type SystemEntry,
  type SystemLayout,
} from "./sandbox_args.ts";
export {
  NOBODY,
  runSandbox,
  type SandboxEnd,
  type SandboxLimits,
  wrappedArgv,
} from "./sandbox_process.ts";
export { type FilterArch, hostFilterArch, toolSeccompFilter } from "./seccomp_filter.ts";
export {
  RUN_ERRORS,
  type RuntimeOptions,
  type RuntimeSettings,
  SandboxRuntime,
} from "./sandbox_runtime.ts";
export { probeSystemLayout, SYSTEM_PATHS } from "./system_layout.ts";
