/**
 * Credential rules (docs/credentials.md): the owner's `credentials/<id>.toml` files, the
 * placeholder a task holds instead of a credential, finding that placeholder in a task's HTTPS
 * request and putting the vault's value in its place, and the environment that hands the
 * placeholder to the task's programs (env names, git's credential helper). Pure but for the loader.
 * Other modules import only from here.
 */
export {
  type CredentialLoad,
  credentialsInvalidReport,
  loadCredentialRules,
} from "./load_rules.ts";
export { isPlaceholder, newPlaceholder, PLACEHOLDER_PREFIX } from "./placeholder.ts";
export { carriesPlaceholder, headCarriesPlaceholder } from "./placeholder_seen.ts";
export {
  type AppliedCredential,
  applyCredential,
  type CredentialFinding,
  type CredentialRequest,
  findCredential,
  type OfferedCredential,
  type TunnelTarget,
} from "./request_credential.ts";
export {
  CREDENTIAL_ID,
  type CredentialParse,
  type CredentialPlacement,
  type CredentialProblem,
  type CredentialRule,
  ENV_NAME,
  parseCredentialRule,
} from "./rule_file.ts";
export { credentialEnvironment } from "./task_environment.ts";
