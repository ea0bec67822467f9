/**
 * The subschema entry, cn=subschema (RFC 4512 §4.2 and §4.1, docs/ldap.md
 * "Subschema"), generated from the directory's schema: one attributeTypes
 * value per attribute type and one objectClasses value per class, in the
 * RFC 4512 description form, with the matching rules and LDAP syntax each of
 * our syntaxes behaves as. Standard names carry their registered OIDs; our
 * own names have none, so each gets a stable one derived from its name
 * under the UUID arc 2.25 (ITU-T X.667): the first 128 bits of a SHA-256 of
 * the name, marked as a version 8 UUID. Secret attribute types are left out,
 * and with them every mention in the classes: no secret is readable or
 * writable over LDAP, so clients have no use for the names.
 */
import { createHash } from 'node:crypto';
import type { AttributeType, ObjectClass, Schema, Syntax } from '../directory/types.js';

export const SUBSCHEMA_DN = 'cn=subschema';

/** Registered OIDs of the standard names we use (RFC 4512, 4519, 4524, 4530, 2798, 2307; openssh-lpk's). */
const KNOWN_OIDS: Readonly<Record<string, string>> = {
  objectclass: '2.5.4.0',
  cn: '2.5.4.3',
  sn: '2.5.4.4',
  ou: '2.5.4.11',
  description: '2.5.4.13',
  member: '2.5.4.31',
  givenname: '2.5.4.42',
  initials: '2.5.4.43',
  uid: '0.9.2342.19200300.100.1.1',
  mail: '0.9.2342.19200300.100.1.3',
  dc: '0.9.2342.19200300.100.1.25',
  displayname: '2.16.840.1.113730.3.1.241',
  entryuuid: '1.3.6.1.1.16.4',
  createtimestamp: '2.5.18.1',
  modifytimestamp: '2.5.18.2',
  uidnumber: '1.3.6.1.1.1.1.0',
  gidnumber: '1.3.6.1.1.1.1.1',
  gecos: '1.3.6.1.1.1.1.2',
  homedirectory: '1.3.6.1.1.1.1.3',
  loginshell: '1.3.6.1.1.1.1.4',
  // openssh-lpk
  sshpublickey: '1.3.6.1.4.1.24552.500.1.1.1.13',
  // object classes
  top: '2.5.6.0',
  person: '2.5.6.6',
  organizationalperson: '2.5.6.7',
  inetorgperson: '2.16.840.1.113730.3.2.2',
  domain: '0.9.2342.19200300.100.4.13',
  posixaccount: '1.3.6.1.1.1.2.0',
  posixgroup: '1.3.6.1.1.1.2.2',
  iphost: '1.3.6.1.1.1.2.6',
  ldappublickey: '1.3.6.1.4.1.24552.500.1.1.2.0',
};

/** A stable OID for one of our own names: 2.25 and a version 8 UUID from a hash of the kind and name. */
export function derivedOid(kind: 'attribute' | 'class', name: string): string {
  const h = createHash('sha256').update(`dirid ${kind} ${name.toLowerCase()}`).digest().subarray(0, 16);
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  return `2.25.${BigInt('0x' + h.toString('hex')).toString(10)}`;
}

const oidOf = (kind: 'attribute' | 'class', name: string) => KNOWN_OIDS[name.toLowerCase()] ?? derivedOid(kind, name);

/** Matching rules and LDAP syntax OID (RFC 4517) each of our syntaxes behaves as. */
const SYNTAX_RULES: Record<Exclude<Syntax, 'secret'>, string> = {
  string: 'EQUALITY caseIgnoreMatch ORDERING caseIgnoreOrderingMatch SUBSTR caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15',
  exact: 'EQUALITY caseExactMatch ORDERING caseExactOrderingMatch SUBSTR caseExactSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15',
  dn: 'EQUALITY distinguishedNameMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.12',
  integer: 'EQUALITY integerMatch ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27',
  boolean: 'EQUALITY booleanMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.7',
  time: 'EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24',
  binary: 'EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40',
};

const names = (list: readonly string[]) => (list.length === 1 ? `'${list[0]}'` : `( ${list.map((n) => `'${n}'`).join(' ')} )`);
const oids = (list: readonly string[]) => (list.length === 1 ? list[0]! : `( ${list.join(' $ ')} )`);

export function attributeTypeDescription(a: AttributeType): string {
  if (a.syntax === 'secret') throw new Error(`${a.name} is a secret`);
  const parts = [oidOf('attribute', a.name), `NAME ${names([a.name, ...(a.aliases ?? [])])}`, SYNTAX_RULES[a.syntax]];
  if (a.singleValue) parts.push('SINGLE-VALUE');
  if (a.operational) parts.push('NO-USER-MODIFICATION', 'USAGE directoryOperation');
  return `( ${parts.join(' ')} )`;
}

export function objectClassDescription(c: ObjectClass, visible: (attr: string) => string | undefined): string {
  const parts = [oidOf('class', c.name), `NAME '${c.name}'`];
  if (c.sup) parts.push(`SUP ${c.sup}`);
  parts.push(c.kind.toUpperCase());
  const must = c.must.map(visible).filter((x): x is string => x !== undefined);
  const may = c.may.map(visible).filter((x): x is string => x !== undefined);
  if (must.length) parts.push(`MUST ${oids(must)}`);
  if (may.length) parts.push(`MAY ${oids(may)}`);
  return `( ${parts.join(' ')} )`;
}

const cache = new WeakMap<Schema, Record<string, string[]>>();

/** The subschema entry's attributes (all but objectClass and cn are operational). */
export function subschemaAttributes(schema: Schema): Record<string, string[]> {
  const hit = cache.get(schema);
  if (hit) return hit;
  const def = schema.definition;
  const visible = (attr: string) => {
    const at = schema.attribute(attr);
    return at && at.syntax !== 'secret' ? at.name : undefined;
  };
  const out = {
    objectClass: ['top', 'subentry', 'subschema', 'extensibleObject'],
    cn: ['subschema'],
    attributeTypes: def.attributeTypes.filter((a) => a.syntax !== 'secret').map(attributeTypeDescription),
    objectClasses: def.objectClasses.map((c) => objectClassDescription(c, visible)),
  };
  cache.set(schema, out);
  return out;
}

export const SUBSCHEMA_OPERATIONAL: ReadonlySet<string> = new Set(['attributetypes', 'objectclasses']);
