/** The vault: root-only keys, declared secrets, the per-app deny list, and redaction everywhere. */
export { ANTHROPIC_KEY_NAME, checkAnthropicKey, type KeyCheck } from "./anthropic_check.ts";
export { policyPath } from "./deny_policy.ts";
export { formsOf } from "./encodings.ts";
export { checkKeyName, isKeyName, isRedactedName, MIN_REDACTED_LENGTH } from "./names.ts";
export { redactingAppender, redactResponses } from "./redact_sinks.ts";
export { REDACTED, Redactor } from "./redactor.ts";
export {
  answerRedaction,
  redactingByteStream,
  redactingExactBytes,
  redactingStream,
  type Span,
  type SpanStream,
  StreamRedactor,
  type TextRedaction,
} from "./stream_redactor.ts";
export {
  type SecretReader,
  SecretRefusedError,
  Vault,
  type VaultKeyListing,
  type VaultOptions,
  type VaultView,
} from "./vault.ts";
export { checkFileInfo, readVaultFile, VaultFileError, writeVaultFile } from "./vault_file.ts";
export { parseVaultText, renderVaultText } from "./vault_text.ts";
export { type VaultRouteDeps, vaultRoutes } from "./vault_routes.ts";
