/**
 * The root DSE (RFC 4512 §5.1, docs/ldap.md "Root DSE"): what a client may
 * learn before binding. The naming context (our base DN), LDAPv3, the SASL
 * mechanism (GSSAPI), the paged results control, the extended operations
 * (StartTLS, Who am I?, Password Modify), the features (all operational
 * attributes with `+`, RFC 3673; absolute true and false filters,
 * RFC 4526), where the subschema is, and who we are; and `lastUSN`, the
 * greatest entryUSN given so far (framework/view.ts), by which SSSD learns
 * to ask for the sudo rules changed since a number instead of a time. All
 * of it but objectClass is operational: it comes with `+` or by name.
 */
import { ControlOid, ExtendedOid } from '../ldap/codes.js';
import { highestUsn } from '../framework/view.js';
import { SUBSCHEMA_DN } from './subschema.js';

/** RFC 3673 (`+`) and RFC 4526 (`(&)`, `(|)`) as supportedFeatures. */
const FEATURES = ['1.3.6.1.4.1.4203.1.5.1', '1.3.6.1.4.1.4203.1.5.3'];

export function rootDseAttributes(baseDn: string, version: string): Record<string, string[]> {
  return {
    objectClass: ['top'],
    namingContexts: [baseDn],
    supportedLDAPVersion: ['3'],
    supportedSASLMechanisms: ['GSSAPI'],
    supportedControl: [ControlOid.pagedResults],
    supportedExtension: [ExtendedOid.startTls, ExtendedOid.whoAmI, ExtendedOid.passwordModify],
    supportedFeatures: FEATURES,
    subschemaSubentry: [SUBSCHEMA_DN],
    vendorName: ['dirid'],
    vendorVersion: [version],
    lastUSN: [String(highestUsn())],
  };
}

export const ROOT_DSE_OPERATIONAL: ReadonlySet<string> = new Set(
  ['namingContexts', 'supportedLDAPVersion', 'supportedSASLMechanisms', 'supportedControl', 'supportedExtension', 'supportedFeatures', 'subschemaSubentry', 'vendorName', 'vendorVersion', 'lastUSN'].map((n) => n.toLowerCase()),
);
