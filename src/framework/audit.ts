/**
 * The audit trail (docs/logging.md, "Audit"): every directory write a
 * command commits is logged once, as a `write` event, with who made it
 * (the principal), the command, the operation, the entry's DN and the
 * names of the attributes it changed. The values are logged only of the
 * attributes that decide who an account is and what it may do (ACCESS_
 * ATTRIBUTES: whether it is disabled, group and role membership, principal
 * names, expiry, the failed-login count an unlock resets, how it logs in
 * and to which IdP account it is linked, its POSIX ids), so that "who
 * disabled bob, and when" has an answer in the log; never of a secret (an
 * attribute of secret syntax, or one whose name says secret: userPassword,
 * krbPrincipalKey, dirIdpClientSecret…), and not of the rest (names, mail,
 * SSH keys), which the directory holds and the log need not copy.
 */
import type { Attributes, Modification, Schema, WriteOp } from '../directory/types.js';
import { isSecretField, type Fields, type FieldValue, type Logger } from '../log/logger.js';

/** The attributes whose values a write event carries (compared without letter case). */
export const ACCESS_ATTRIBUTES: ReadonlySet<string> = new Set(
  [
    'nsAccountLock',
    'member',
    'krbPrincipalName',
    'krbPrincipalAuthInd',
    'krbPrincipalExpiration',
    'krbPasswordExpiration',
    'krbLoginFailedCount',
    'dirUserAuthType',
    'dirIdpConfigLink',
    'dirIdpSub',
    'uidNumber',
    'gidNumber',
  ].map((a) => a.toLowerCase()),
);

/** Whether a write event may carry this attribute's values. */
function valuesShown(schema: Schema, attr: string): boolean {
  if (!ACCESS_ATTRIBUTES.has(attr.toLowerCase()) || isSecretField(attr)) return false;
  return schema.attribute(attr)?.syntax !== 'secret';
}

/** Attribute names in the order given, each once (the schema's spelling when it knows them). */
function names(schema: Schema, attrs: Iterable<string>): string[] {
  const out = new Map<string, string>();
  for (const a of attrs) if (!out.has(a.toLowerCase())) out.set(a.toLowerCase(), schema.attribute(a)?.name ?? a);
  return [...out.values()];
}

/** An add's shown values: `{ set: { member: [...] } }`. */
function addedValues(schema: Schema, attrs: Attributes): Fields {
  const set: Record<string, FieldValue> = {};
  for (const [a, v] of Object.entries(attrs)) if (valuesShown(schema, a)) set[schema.attribute(a)?.name ?? a] = v;
  return Object.keys(set).length > 0 ? { set } : {};
}

/** A modify's shown values by operation: `{ replace: { nsAccountLock: ['TRUE'] }, add: { member: [...] }, delete: { member: [...] } }`. */
function modifiedValues(schema: Schema, mods: readonly Modification[]): Fields {
  const byOp: Record<string, Record<string, string[]>> = {};
  for (const m of mods) {
    if (!valuesShown(schema, m.attr)) continue;
    const name = schema.attribute(m.attr)?.name ?? m.attr;
    const group = (byOp[m.op] ??= {});
    // a delete of the whole attribute names no values: `*`
    group[name] = [...(group[name] ?? []), ...(m.values ?? ['*'])];
  }
  return byOp;
}

/** The fields of one write's event. */
export function writeFields(schema: Schema, op: WriteOp): Fields {
  switch (op.kind) {
    case 'add':
      return { change: 'add', dn: op.dn, attrs: names(schema, Object.keys(op.attrs)), ...addedValues(schema, op.attrs) };
    case 'modify':
      return { change: 'modify', dn: op.dn, attrs: names(schema, op.mods.map((m) => m.attr)), ...modifiedValues(schema, op.mods) };
    case 'delete':
      return { change: 'delete', dn: op.dn };
    case 'rename':
      return { change: 'rename', dn: op.dn, new_rdn: op.newRdn };
  }
}

/** Logs each write of a committed transaction a command made: `write principal=… command=… change=… dn=… attrs=…`. */
export function auditWrites(log: Logger, schema: Schema, who: { principal: string | null; command: string }, ops: readonly WriteOp[]): void {
  for (const op of ops) log.info('write', { principal: who.principal, command: who.command, ...writeFields(schema, op) });
}
