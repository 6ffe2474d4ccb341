/** The task broker: each task's socket, the call path, approvals, journal and task files. */
export {
  type AnswerResult,
  ApprovalTable,
  approve,
  closeApproval,
  closeTaskApprovals,
  expireDue,
  type KeptRequest,
  type PendingApproval,
  withdrawAll,
} from "./approvals.ts";
export {
  closeAtRestart,
  type KeptApproval,
  restoreApprovals,
  type RestoreCounts,
} from "./approval_restore.ts";
export { ASK_TOOL, handleAsk } from "./ask_path.ts";
export { type RequestCall, requestCall, type RequestEnd } from "./request_call.ts";
export { canonicalJson } from "./canonical_json.ts";
export { decisionEvent } from "./records.ts";
export { failureRefusal } from "./failure_refusal.ts";
export { CALL_PENDING } from "./call_path.ts";
export {
  admitModelRequest,
  MODEL_TOOL,
  type ModelAdmission,
  type ModelRequestFacts,
} from "./model_budget.ts";
export { auditFailure } from "./result_record.ts";
export type {
  ApprovalContext,
  Approvals,
  AuditAppender,
  BrokerDeps,
  SecretReader,
  VaultView,
  Verdict,
} from "./deps.ts";
export { ADMIN_PREFIXES, forbidPaths, TASK_PATHS } from "./forbidden.ts";
export { redactValue } from "../common/mod.ts";
export { type CallAnswer, Journal, type JournalLine } from "./journal.ts";
export { loopModel } from "./model_route.ts";
export { drawTaskBytes } from "./task_body.ts";
export { TaskHandle } from "./task_handle.ts";
export {
  addUsage,
  carriedNanocents,
  type ModelSpend,
  type ModelUsageLine,
  modelUsageLine,
  NANOCENTS,
  spendRows,
} from "./model_spend.ts";
export { recoverTaskJournals } from "./unrecorded.ts";
export {
  chargeHeldCharges,
  type HeldCharge,
  holdWhat,
  markUnsettled,
  settleHeldCharges,
} from "./held_charges.ts";
export { charge, publicTask, taskRoutes } from "./task_routes.ts";
export {
  isLive,
  newTaskId,
  readTask,
  readTasks,
  TASK_STATES,
  type TaskRecord,
  type TaskState,
  type WorkerSpec,
  workerSpec,
  writeTask,
} from "./task_store.ts";
