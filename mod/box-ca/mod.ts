/**
 * The box's certificate authority (docs/threat-model.md#a-tasks-doors): made once, root-only, in
 * the box home's `ca/`; its name constraints permit only the model hosts the egress proxy
 * intercepts, and it mints a cached ECDSA P-256 leaf per host. Tasks trust it through `bundle.pem`, the CA then the system roots.
 */
export { type BoxCa, type Leaf, openBoxCa, type OpenBoxCaOptions, SYSTEM_ROOTS } from "./box_ca.ts";
export { BoxCaError } from "./box_ca_error.ts";
export { makeTaskCa, type TaskCa } from "./task_ca.ts";
export {
  INTERCEPTED_HOSTS,
  type InterceptedService,
  isInterceptedHost,
} from "./intercepted_hosts.ts";
