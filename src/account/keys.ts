/**
 * Kerberos long-term keys of directory principals. Keys live in the secret
 * attribute krbPrincipalKey (encrypted at rest by the directory), one value
 * per enctype: JSON {etype, kvno, key (base64), salt?}. Passwords give keys
 * for every supported enctype with the default salt (realm + name
 * components); services and krbtgt get random keys. Keytabs export them.
 */
import { profile, supportedEtypes } from '../kerberos/crypto/index.js';
import { writeKeytab } from '../kerberos/keytab.js';
import { ApError } from '../kerberos/ap-exchange.js';
import { ErrorCode } from '../kerberos/iana.js';

export interface StoredKey {
  etype: number;
  kvno: number;
  key: Buffer;
  /** salt used for string-to-key; absent for random keys */
  salt?: string;
}

export function defaultSalt(realm: string, components: readonly string[]): string {
  return realm + components.join('');
}

export function keysFromPassword(password: string, realm: string, components: readonly string[], kvno: number): StoredKey[] {
  const salt = defaultSalt(realm, components);
  return supportedEtypes.map((etype) => ({ etype, kvno, key: profile(etype).stringToKey(password, salt).value, salt }));
}

export function randomKeys(kvno: number): StoredKey[] {
  return supportedEtypes.map((etype) => ({ etype, kvno, key: profile(etype).randomKey().value }));
}

export function serializeKeys(keys: readonly StoredKey[]): string[] {
  return keys.map((k) => JSON.stringify({ etype: k.etype, kvno: k.kvno, key: k.key.toString('base64'), ...(k.salt !== undefined ? { salt: k.salt } : {}) }));
}

export function parseKeys(values: readonly string[]): StoredKey[] {
  const out: StoredKey[] = [];
  for (const v of values) {
    try {
      const o = JSON.parse(v) as { etype: number; kvno: number; key: string; salt?: string };
      if (typeof o.etype === 'number' && typeof o.kvno === 'number' && typeof o.key === 'string') {
        out.push({ etype: o.etype, kvno: o.kvno, key: Buffer.from(o.key, 'base64'), ...(typeof o.salt === 'string' ? { salt: o.salt } : {}) });
      }
    } catch {
      // a damaged value is skipped; the principal then lacks that enctype
    }
  }
  return out;
}

/** A keytab (MIT format) holding `keys` for the principal `components@realm`. */
export function keytabFor(realm: string, components: string[], keys: StoredKey[]): Buffer {
  const now = Math.floor(Date.now() / 1000);
  return writeKeytab(keys.map((k) => ({ realm, components, nameType: components.length > 1 ? 3 : 1, timestamp: now, kvno: k.kvno, etype: k.etype, key: k.key })));
}

/** The stored keys of a new service or host principal: random, key version 1. */
export function newRandomKeys(): string[] {
  return serializeKeys(randomKeys(1));
}

/**
 * How a service of ours (the API's HTTP/, the LDAP service's ldap/) finds
 * the key of a ticket's server. Only a name `accepts` says is the service's
 * own (the acceptor names of the realm's dirid servers, as the server lists
 * them; never a prefix such as `HTTP/`) gets a key: a ticket for any other
 * service of the realm belongs to that service, whose operator could replay
 * what clients sent it or forge one with its keytab (docs/access.md). Null
 * for such a name, which the acceptor refuses naming it (ap-exchange.ts);
 * an accepted name without a key of the ticket's enctype and key version
 * is refused saying so.
 */
export function serviceKeyFinder(
  accounts: { find(name: string): Promise<{ dn: string } | null>; dir: { readSecret(dn: string, attr: string): Promise<string[]> } },
  accepts: (server: string) => Promise<boolean>,
): (server: string, etype: number, kvno: number | undefined) => Promise<{ etype: number; value: Buffer } | null> {
  return async (server, etype, kvno) => {
    if (!(await accepts(server))) return null;
    const e = await accounts.find(server);
    if (!e) throw new ApError(`${server} is not in the directory`, ErrorCode.KRB_AP_ERR_NOT_US);
    const keys = parseKeys(await accounts.dir.readSecret(e.dn, 'krbPrincipalKey')).filter((x) => x.etype === etype);
    if (keys.length === 0) throw new ApError(`${server} has no key of enctype ${etype}`, ErrorCode.KRB_AP_ERR_NOKEY);
    const k = kvno === undefined ? keys[0] : keys.find((x) => x.kvno === kvno);
    if (!k) throw new ApError(`the ticket for ${server} was sealed with key version ${kvno}, which is not current`, ErrorCode.KRB_AP_ERR_BADKEYVER);
    return { etype, value: k.key };
  };
}
