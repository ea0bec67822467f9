/**
 * `dirid kinit [-c CCACHE] PRINCIPAL` and `dirid klist [-c CCACHE]`: a
 * password login at the realm's KDC (from krb5.conf) that writes an
 * MIT-readable credential cache, and a listing of one.
 */
import { parseArgs } from 'node:util';
import { parsePrincipal, principalToString } from '../kerberos/asn1/primitives.js';
import { configEntry, loadCcacheFile, resolveCcacheName, saveCcacheFile, CONF_REALM, type Ccache } from '../kerberos/ccache.js';
import { asWithPassword, KrbClientError, type Credentials } from '../kerberos/client.js';
import { kdcAddresses, loadKrb5Conf } from '../kerberos/krb5-conf.js';
import { sendToKdc } from '../kerberos/transport.js';
import { readSecret } from './prompt.js';

import { CliError } from './errors.js';

export { CliError };

const KRB_MESSAGES: Record<number, (p: string) => string> = {
  6: (p) => `Client '${p}' not found in Kerberos database`,
  18: () => "Client's credentials have been revoked",
  24: () => 'Password incorrect',
  37: () => 'Clock skew too great',
};

export function credentialsToCcache(creds: Credentials, extra: Ccache['credentials'] = []): Ccache {
  const client = { nameType: creds.client.nameType, realm: creds.crealm, components: creds.client.nameString };
  const t = (d?: Date) => (d ? Math.floor(d.getTime() / 1000) : 0);
  return {
    version: 4,
    headers: [{ tag: 1, value: Buffer.alloc(8) }],
    principal: client,
    credentials: [
      ...extra,
      {
        client,
        server: { nameType: creds.server.nameType, realm: creds.srealm, components: creds.server.nameString },
        key: { etype: creds.sessionKey.etype, value: creds.sessionKey.value },
        authtime: t(creds.part.authtime),
        starttime: t(creds.part.starttime ?? creds.part.authtime),
        endtime: t(creds.part.endtime),
        renewTill: t(creds.part.renewTill),
        isSkey: false,
        flags: creds.part.flags,
        addresses: [],
        authdata: [],
        ticket: creds.ticket.raw,
        secondTicket: Buffer.alloc(0),
      },
    ],
  };
}

export async function kinitCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { c: { type: 'string' }, T: { type: 'string' } }, allowPositionals: true, strict: true });
  const conf = loadKrb5Conf();
  const realmDefault = conf.defaultRealm;
  const who = positionals[0];
  if (!who) throw new CliError('usage: dirid kinit [-c CCACHE] PRINCIPAL', 2);
  if (!realmDefault && !who.includes('@')) throw new CliError('no default realm: give PRINCIPAL@REALM or set KRB5_CONFIG');
  const { name, realm } = parsePrincipal(who, realmDefault ?? '');
  const full = principalToString(name, realm);
  const kdcs = kdcAddresses(conf, realm);
  if (kdcs.length === 0) throw new CliError(`Cannot find KDC for realm "${realm}"`);
  const password = await readSecret(`Password for ${full}`);
  const send = (m: Buffer) => sendToKdc(realm, kdcs, m);
  let creds: Credentials;
  try {
    creds = await asWithPassword(send, name, realm, password);
  } catch (e) {
    if (e instanceof KrbClientError && e.code !== undefined && KRB_MESSAGES[e.code]) {
      throw new CliError(`${KRB_MESSAGES[e.code]!(full)} while getting initial credentials`);
    }
    throw e;
  }
  const path = resolveCcacheName(values.c ?? process.env.KRB5CCNAME);
  const client = { nameType: creds.client.nameType, realm: creds.crealm, components: creds.client.nameString };
  saveCcacheFile(path, credentialsToCcache(creds, [configEntry(client, 'pa_type', '2', `krbtgt/${realm}@${realm}`)]));
  return 0;
}

const fmt = (s: number) => {
  const d = new Date(s * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getMonth() + 1)}/${p(d.getDate())}/${p(d.getFullYear() % 100)} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
};

export async function klistCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { c: { type: 'string' } }, strict: true });
  const path = resolveCcacheName(values.c ?? process.env.KRB5CCNAME);
  const cc = loadCcacheFile(path);
  const name = (p: Ccache['principal']) => `${p.components.join('/')}@${p.realm}`;
  const lines = [`Ticket cache: FILE:${path}`, `Default principal: ${name(cc.principal)}`, '', 'Valid starting     Expires            Service principal'];
  for (const c of cc.credentials) {
    if (c.server.realm === CONF_REALM) continue;
    lines.push(`${fmt(c.starttime || c.authtime)}  ${fmt(c.endtime)}  ${name(c.server)}`);
    if (c.renewTill) lines.push(`\trenew until ${fmt(c.renewTill)}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}
