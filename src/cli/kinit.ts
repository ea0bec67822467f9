/**
 * `dirid kinit [-c CCACHE] PRINCIPAL` and `dirid klist [-c CCACHE]`: a
 * password login at the realm's KDC (from krb5.conf), or armored, a login at
 * the user's IdP (the device flow, polled; a flow the KDC restarts shows its
 * new code), that writes an MIT-readable credential cache, and a listing of
 * one. Like MIT kinit, it warns when the password expires within a week
 * (the reply's key-expiration), and says so when it has expired.
 */
import { parseArgs } from 'node:util';
import { parsePrincipal, principalToString } from '../kerberos/asn1/primitives.js';
import { configEntry, loadCcacheFile, resolveCcacheName, saveCcacheFile, CONF_REALM, type Ccache } from '../kerberos/ccache.js';
import { asReqBody, asWithKeys, asWithPassword, FastRequiredError, KrbClientError, type Credentials } from '../kerberos/client.js';
import { armoredAsReq, encryptedChallenge, parseIdpChallenge, processArmored, type IdpChallenge } from '../kerberos/fast-client.js';
import { decodeEtypeInfo2 } from '../kerberos/asn1/padata.js';
import { findCredentials } from '../kerberos/ccache-credentials.js';
import { tgsPrincipal } from '../kerberos/principal.js';
import { readKeytab } from '../kerberos/keytab.js';
import { profile, supportedEtypes } from '../kerberos/crypto/index.js';
import { ErrorCode, PaType } from '../kerberos/iana.js';
import { KdcUnreachableError } from '../kerberos/transport.js';
import { readFileSync } from 'node:fs';
import type { PrincipalName } from '../kerberos/asn1/primitives.js';
import { kdcAddresses, loadKrb5Conf } from '../kerberos/krb5-conf.js';
import { sendToKdc } from '../kerberos/transport.js';
import { readSecret } from './prompt.js';
import { LOCAL_COMMANDS } from './local-commands.js';

import { CliError, parseArgsProblem } from './errors.js';

export { CliError };

const KRB_MESSAGES: Record<number, (p: string) => string> = {
  6: (p) => `Client '${p}' not found in Kerberos database`,
  18: () => "Client's credentials have been revoked",
  23: () => 'Password has expired (choose a new one: kpasswd, or MIT kinit, asks for it)',
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

/** The TGT in an armor ccache (`-T`). */
function armorFromCcache(name: string, realm: string): Credentials {
  const tgt = findCredentials(loadCcacheFile(resolveCcacheName(name)), tgsPrincipal(realm), 1);
  if (!tgt) throw new CliError(`no valid ${tgsPrincipal(realm)} ticket in the armor cache ${name}`);
  return tgt;
}

/** A TGT for the first principal of a host keytab, to armor with. */
async function armorFromKeytab(path: string, realm: string, send: (m: Buffer) => Promise<Buffer>): Promise<Credentials> {
  const entries = readKeytab(readFileSync(path));
  const first = entries.find((e) => e.realm === realm);
  if (!first) throw new CliError(`no key for realm ${realm} in ${path}`);
  const keys = entries.filter((e) => e.realm === realm && e.components.join('/') === first.components.join('/'));
  const name = { nameType: first.nameType, nameString: first.components };
  return asWithKeys(send, name, realm, keys.map((k) => ({ etype: k.etype, value: k.key })));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** MIT kinit's warning (lib/krb5/krb/gic_pwd.c warn_pw_expiry) when the password expires within a week; null otherwise. */
export function passwordExpiryWarning(expires: Date | undefined, now = new Date()): string | null {
  if (!expires) return null;
  // whole seconds, as MIT counts them
  const delta = Math.floor(expires.getTime() / 1000) - Math.floor(now.getTime() / 1000);
  if (delta > 7 * 86400) return null;
  const when = expires.toUTCString();
  if (delta < 3600) return `Warning: Your password will expire in less than one hour on ${when}`;
  if (delta < 2 * 86400) return `Warning: Your password will expire in ${Math.floor(delta / 3600)} hour${delta < 7200 ? '' : 's'} on ${when}`;
  return `Warning: Your password will expire in ${Math.floor(delta / 86400)} days on ${when}`;
}

/** The message for a KDC refusal; the idp mechanism's refusals are told by their e-text. */
function kdcFailure(e: { errorCode: number; eText?: string }, full: string, idp = false): CliError {
  const suffix = ' while getting initial credentials';
  if (idp) {
    if (e.errorCode === 6) return new CliError(`User not found${suffix}`);
    // PREAUTH_FAILED with the KDC's words (PREAUTH_EXPIRED from servers before it)
    if (e.errorCode === 90 || (e.errorCode === 24 && /device code has expired/.test(e.eText ?? ''))) return new CliError(`The device code has expired${suffix}`);
    return new CliError(`${e.eText ?? `KDC error ${e.errorCode}`}${suffix}`);
  }
  const known = KRB_MESSAGES[e.errorCode];
  return new CliError(`${known ? known(full) : `KDC error ${e.errorCode}${e.eText ? ` (${e.eText})` : ''}`}${suffix}`);
}

/** What tells one device authorization from another: its code and where to enter it. */
function challengeKey(ch: IdpChallenge): string {
  return JSON.stringify([ch.verification_uri, ch.user_code, ch.verification_uri_complete ?? null]);
}

/** Prints where to approve the login and with which code; returns the challenge's key. */
function showChallenge(ch: IdpChallenge): string {
  process.stdout.write(
    ch.verification_uri_complete
      ? `Authenticate at ${ch.verification_uri_complete}\n(or open ${ch.verification_uri} and enter the code ${ch.user_code})\n`
      : `Authenticate at ${ch.verification_uri} with the code ${ch.user_code}\n`,
  );
  process.stdout.write('Waiting for the identity provider...\n');
  return challengeKey(ch);
}

/** An armored login: the idp mechanism (device flow, polled without ENTER) or a password by encrypted challenge. */
async function armoredLogin(send: (m: Buffer) => Promise<Buffer>, armor: Credentials, name: PrincipalName, realm: string, full: string): Promise<{ creds: Credentials; paType: number }> {
  const body = () => asReqBody(name, realm, {});
  let b = body();
  let req = armoredAsReq(armor, b, []);
  let r = processArmored(await send(req.msg), req, b, req.armorKey);
  if (r.kind === 'rep') throw new CliError('the KDC issued a ticket without pre-authentication');
  // nothing was tried yet, so a refusal here is about the account or its IdP, never a password
  if (r.error.errorCode !== ErrorCode.KDC_ERR_PREAUTH_REQUIRED) throw kdcFailure(r.error, full, r.error.errorCode !== ErrorCode.KDC_ERR_C_PRINCIPAL_UNKNOWN);
  const challengePa = r.padata.find((p) => p.type === PaType.REDHAT_IDP_OAUTH2);
  if (challengePa) {
    let shown = showChallenge(parseIdpChallenge(challengePa.value));
    let cookie = r.padata.find((p) => p.type === PaType.FX_COOKIE);
    const deadline = Date.now() + 30 * 60_000;
    while (Date.now() < deadline) {
      await sleep(Number(process.env.DIRID_KINIT_POLL_MS ?? 5000));
      b = body();
      req = armoredAsReq(armor, b, [{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, ...(cookie ? [cookie] : [])]);
      r = processArmored(await send(req.msg), req, b, req.armorKey);
      if (r.kind === 'rep') return { creds: r.creds, paType: PaType.REDHAT_IDP_OAUTH2 };
      const pending = (r.error.errorCode === ErrorCode.KDC_ERR_MORE_PREAUTH_DATA_REQUIRED || r.error.errorCode === ErrorCode.KDC_ERR_PREAUTH_REQUIRED) && r.padata.some((p) => p.type === PaType.REDHAT_IDP_OAUTH2);
      if (!pending) throw kdcFailure(r.error, full, true);
      cookie = r.padata.find((p) => p.type === PaType.FX_COOKIE) ?? cookie;
      // the KDC started a new device authorization (the old one is gone): the user must approve the new code
      const ch = parseIdpChallenge(r.padata.find((p) => p.type === PaType.REDHAT_IDP_OAUTH2)!.value);
      if (challengeKey(ch) !== shown) {
        process.stdout.write('The login was restarted: the code shown before is no longer valid.\n');
        shown = showChallenge(ch);
      }
    }
    throw new CliError('gave up waiting for the identity provider');
  }
  const info = r.padata.find((p) => p.type === PaType.ETYPE_INFO2);
  const entry = info ? decodeEtypeInfo2(info.value).find((e) => supportedEtypes.includes(e.etype)) : undefined;
  if (!entry) throw new CliError('the KDC offered no pre-authentication this client can do');
  const password = await readSecret(`Password for ${full}`);
  const longTerm = profile(entry.etype).stringToKey(password, entry.salt ?? realm + name.nameString.join(''), entry.s2kparams);
  const cookie = r.padata.find((p) => p.type === PaType.FX_COOKIE);
  b = body();
  req = armoredAsReq(armor, b, (armorKey) => [encryptedChallenge(armorKey, longTerm), ...(cookie ? [cookie] : [])]);
  r = processArmored(await send(req.msg), req, b, longTerm);
  if (r.kind === 'error') throw kdcFailure(r.error, full);
  return { creds: r.creds, paType: PaType.ENCRYPTED_CHALLENGE };
}

const KINIT_USAGE = `usage: dirid kinit [-c CCACHE] [-T ARMOR_CCACHE | -k KEYTAB] PRINCIPAL
Gets a ticket-granting ticket for PRINCIPAL (NAME or NAME@REALM; the realm
and its KDCs from KRB5_CONFIG's krb5.conf): with a password, or armored
(FAST) for a user the server logs in through an IdP (the device flow).
  -c CCACHE         where to store the ticket (default: KRB5CCNAME, else FILE:/tmp/krb5cc_UID)
  -k KEYTAB         armor with a ticket got from this host keytab (the host's own key)
  -T ARMOR_CCACHE   armor with the TGT in this credential cache
  -h, --help        this text
`;
const KLIST_USAGE = `usage: dirid klist [-c CCACHE]
Lists the tickets in a credential cache.
  -c CCACHE         the cache to list (default: KRB5CCNAME, else FILE:/tmp/krb5cc_UID)
  -h, --help        this text
`;

/** The options of a local command, or its usage: on standard output for -h/--help (undefined), as the error of a misuse (exit 1, docs/conventions.md). */
function localOptions(argv: string[], strings: readonly string[], usage: string): { values: Record<string, string | undefined>; positionals: string[] } | undefined {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const name of strings) options[name] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new CliError(`${parseArgsProblem(e)}\n${usage}`);
  }
  const { help, ...values } = parsed.values;
  if (help) {
    process.stdout.write(usage);
    return undefined;
  }
  return { values: values as Record<string, string | undefined>, positionals: parsed.positionals };
}

export async function kinitCommand(argv: string[]): Promise<number> {
  const parsed = localOptions(argv, LOCAL_COMMANDS.kinit, KINIT_USAGE);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const conf = loadKrb5Conf();
  const realmDefault = conf.defaultRealm;
  const who = positionals[0];
  if (!who) throw new CliError(KINIT_USAGE.trimEnd());
  if (!realmDefault && !who.includes('@')) throw new CliError('no default realm: give PRINCIPAL@REALM or set KRB5_CONFIG');
  const { name, realm } = parsePrincipal(who, realmDefault ?? '');
  const full = principalToString(name, realm);
  const kdcs = kdcAddresses(conf, realm);
  if (kdcs.length === 0) throw new CliError(`Cannot find KDC for realm "${realm}"`);
  const send = (m: Buffer) => sendToKdc(realm, kdcs, m);
  let creds: Credentials;
  let paType = PaType.ENC_TIMESTAMP as number;
  try {
    if (values.T || values.k) {
      const armor = values.T ? armorFromCcache(values.T, realm) : await armorFromKeytab(values.k!, realm, send);
      ({ creds, paType } = await armoredLogin(send, armor, name, realm, full));
    } else {
      // prompted for once the KDC has said the principal has a password (none for a user who logs in at an IdP)
      creds = await asWithPassword(send, name, realm, () => readSecret(`Password for ${full}`));
    }
  } catch (e) {
    if (e instanceof FastRequiredError) {
      throw new CliError(`${full} has no password to log in with here, only pre-authentication inside FAST armor (a login at an IdP, for one): armor the request with a host keytab (dirid kinit -k /etc/krb5.keytab ${who}) or a ticket cache (-T ARMOR_CCACHE)`);
    }
    if (e instanceof KrbClientError && e.code !== undefined && KRB_MESSAGES[e.code]) {
      throw new CliError(`${KRB_MESSAGES[e.code]!(full)} while getting initial credentials`);
    }
    if (e instanceof KdcUnreachableError) throw new CliError(`Cannot contact any KDC for realm '${realm}' while getting initial credentials`);
    throw e;
  }
  const warning = paType === PaType.REDHAT_IDP_OAUTH2 ? null : passwordExpiryWarning(creds.part.keyExpiration);
  if (warning) process.stdout.write(`${warning}\n`);
  const path = resolveCcacheName(values.c ?? process.env.KRB5CCNAME);
  const client = { nameType: creds.client.nameType, realm: creds.crealm, components: creds.client.nameString };
  const conf2 = [configEntry(client, 'pa_type', String(paType), tgsPrincipal(realm))];
  if (paType !== PaType.ENC_TIMESTAMP) conf2.push(configEntry(client, 'fast_avail', 'yes', tgsPrincipal(realm)));
  saveCcacheFile(path, credentialsToCcache(creds, conf2));
  return 0;
}

const fmt = (s: number) => {
  const d = new Date(s * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getMonth() + 1)}/${p(d.getDate())}/${p(d.getFullYear() % 100)} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
};

export async function klistCommand(argv: string[]): Promise<number> {
  const parsed = localOptions(argv, LOCAL_COMMANDS.klist, KLIST_USAGE);
  if (!parsed) return 0;
  if (parsed.positionals.length > 0) throw new CliError(`unexpected argument '${parsed.positionals[0]}'\n${KLIST_USAGE}`);
  const values = parsed.values;
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
