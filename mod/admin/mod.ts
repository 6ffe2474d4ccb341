/**
 * The admin socket's protocol (run/owner-broker/admin.sock): the schema of every request and
 * answer, and the one typed client the owner commands and the portal share.
 */
export {
  AdminAnswerError,
  AdminClient,
  type AdminRequest,
  type AdminResult,
  CoreUnreachableError,
} from "./admin_client.ts";
export {
  type AnsweredAnswer,
  type ApprovalsAnswer,
  approvalsAnswer,
  approveBody,
  type AuditAnswer,
  type AuditRecordsAnswer,
  type AuditRecordView,
  errorAnswer,
  type GrantsAnswer,
  type GrantView,
  type JournalLineView,
  type JournalPageAnswer,
  type ListedTask,
  MAX_RECORDS_PAGE,
  type PendingApprovalView,
  refuseBody,
  type SpendRowView,
  spendRowView,
  type StartTask,
  startTaskBody,
  type StartTaskInput,
  stopTaskBody,
  type TaskRecordsAnswer,
  type TaskShowAnswer,
  type TaskView,
  type UsageAnswer,
  usageAnswer,
  type VaultKeyView,
} from "./admin_schemas.ts";
export {
  type AddAppInput,
  type AppDetailView,
  appDetailView,
  type AppSummaryView,
  appSummaryView,
} from "./app_schemas.ts";
