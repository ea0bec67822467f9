/**
 * The Compare operation (RFC 4511 §4.10, docs/ldap.md "Compare"): for a
 * bound principal, on an entry the read rule lets it see
 * (framework/access.ts; a hidden entry is noSuchObject), with the
 * attribute's equality rule from the directory's schema. A secret is
 * treated as an attribute the entry lacks (noSuchAttribute), whether or not
 * it is set, so a compare cannot test a password or key.
 */
import { ResultCode } from '../ldap/codes.js';
import { assertionValue } from './attributes.js';
import type { CompareRequest } from '../ldap/protocol-requests.js';
import { evaluate, FALSE, filterAttributeType, TRUE } from '../directory/filter.js';
import { readability, readableLayout } from '../framework/access.js';
import type { LdapConnection, OpResult } from './connection.js';
import type { ServiceContext } from './context.js';
import { refuse } from './errors.js';
import { ANONYMOUS_REFUSAL, entryAt } from './search.js';

export async function compare(ctx: ServiceContext, conn: LdapConnection, req: CompareRequest): Promise<OpResult> {
  const p = conn.principal;
  if (!p) throw refuse('insufficientAccessRights', ANONYMOUS_REFUSAL);
  if (readability(p, req.entry, readableLayout(ctx.registry, { baseDn: ctx.dir.baseDn, realm: ctx.realm })) === 'none') throw refuse('noSuchObject', 'no such entry');
  const desc = req.attributeDesc;
  const at = filterAttributeType(ctx.dir.schema, desc);
  if (!at) throw refuse('undefinedAttributeType', `no attribute type ${desc}`);
  const entry = await entryAt(ctx, req.entry);
  if (!entry) throw refuse('noSuchObject', 'no such entry');
  const absent = () => refuse('noSuchAttribute', `the entry has no ${at.name}`);
  if (at.syntax === 'secret') throw absent();
  if (!entry.attrs[at.name]?.length) throw absent();
  const value = assertionValue(ctx.dir.schema, at.name, req.assertionValue);
  const truth = evaluate(ctx.dir.schema, { kind: 'eq', attr: at.name, value }, { attrs: entry.attrs, secrets: new Set() });
  if (truth !== TRUE && truth !== FALSE) throw refuse('invalidAttributeSyntax', `the value is not a valid ${at.name}`);
  return { response: { op: 'compareResponse', resultCode: truth === TRUE ? ResultCode.compareTrue : ResultCode.compareFalse, matchedDN: '', diagnosticMessage: '' } };
}
