/**
 * @peculiar/x509 as gurt uses it: its decorators need the Reflect metadata API, which
 * `reflect-metadata` installs, so that import comes first (module evaluation follows the order of
 * these statements). Every file of mod/box-ca imports the library through this one.
 */
import "reflect-metadata";
export * as x509 from "@peculiar/x509";
export { AsnConvert } from "@peculiar/asn1-schema";
export {
  GeneralName,
  GeneralSubtree,
  GeneralSubtrees,
  id_ce_nameConstraints,
  NameConstraints,
} from "@peculiar/asn1-x509";
