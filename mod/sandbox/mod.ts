/** A task's sandbox: its namespaces, its files, its limits, its doors on loopback. */
export { taskInitElf } from "./task_init.ts";
export {
  type CgroupKind,
  endTaskGroup,
  probeCgroups,
  type TaskLimits,
  TASKS_CGROUP,
} from "./task_limits.ts";
export { dropTo, type SandboxUser, TaskSandboxes, type WorkerSpec } from "./task_sandbox.ts";
export {
  CA_BUNDLE_PATH,
  caEnv,
  type Door,
  EGRESS_PORT,
  INIT_PATH,
  MODEL_PORT,
  modelEnv,
  PLACEHOLDER_KEY,
  proxyEnv,
  taskSandboxArgs,
  type TaskSandboxPlan,
} from "./task_sandbox_args.ts";
export { TASK_ETC_PATHS } from "./etc_paths.ts";
export {
  closeTaskHome,
  freeBytes,
  HOME_IMAGE,
  HOME_RESERVE_BYTES,
  homeRoomProblem,
  homesNotice,
  mountPoints,
  mountTaskHome,
  TaskHomes,
  unmountTaskHomes,
} from "./task_home.ts";
